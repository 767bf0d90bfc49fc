#!/bin/sh
# forged-digest: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
NEW="$MYDIR/attempt-0002-20261204T235800Z"
cp -r "$MINE" "$NEW"
echo "// planted afterwards" >> "$NEW/files/tiled.cu"
"$PY" "$GALLERY/rehash.py" "$NEW" --claim "$MY_DIGEST"
