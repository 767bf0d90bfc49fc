#!/bin/sh
# similarity-given-file: what the student does (tests/dropbox_gallery/README.md: the environment)
# mallory hands in again (stored as `make submit` stores it; no file a hand-in may not hold):
# her tiled.cu calls tiled_elsewhere, which her naive.cu now defines too — alice's tiled kernel, renamed.
set -e
SRC=$(mktemp -d)
cp "$MINE"/files/*.cu "$SRC"/
sed -e 's/^    if (!kTiledKernelWritten) return Status::not_implemented;$/    return tiled_elsewhere<T, TILE>(p);/' \
    -e '/^#include "gemmlab\/stages.h"$/a\
namespace gemmlab::GEMMLAB_NS { template <typename T, int TILE> Status tiled_elsewhere(const GemmProblem<T>\& p); }' \
    "$MINE/files/tiled.cu" > "$SRC/tiled.cu"
grep -q 'return tiled_elsewhere' "$SRC/tiled.cu"
cat "$GALLERY/../fixtures/similarity/tiled_hidden.cu" >> "$SRC/naive.cu"
"$PY" - "$SRC" "$GALLERY/../../cluster" <<'PY'
import sys
from pathlib import Path
src, cluster = Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, cluster)
import config
import dropbox
cfg = config.load(Path("course.toml").resolve())
dropbox.store_attempt(cfg, dropbox.current_user(), {p.name: p for p in src.iterdir()})
PY
rm -r "$SRC"
