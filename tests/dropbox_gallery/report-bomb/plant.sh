#!/bin/sh
# report-bomb: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
HERE=$(mktemp -d)
cp "$MINE"/files/*.cu "$HERE"/
"$PY" "$GALLERY/report-bomb/bomb.py" "$HERE/report.pdf"
# handed in through the door with her own rights: make submit's store, without its look at the report
"$PY" - "$GALLERY/../../cluster" "$HERE" <<'PY'
import os
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import config, dropbox
cfg = config.load("course.toml")
here = Path(sys.argv[2])
dropbox.store_attempt(cfg, os.environ["ME"], dropbox.collect(cfg, here, here / "report.pdf"))
PY
rm -r "$HERE"
