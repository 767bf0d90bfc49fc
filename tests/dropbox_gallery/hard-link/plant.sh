#!/bin/sh
# hard-link: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -f "$MINE/files/tiled.cu"
ln "$THEIRS/files/tiled.cu" "$MINE/files/tiled.cu"
"$PY" "$GALLERY/rehash.py" "$MINE" tiled.cu="$THEIR_SHA_TILED"
