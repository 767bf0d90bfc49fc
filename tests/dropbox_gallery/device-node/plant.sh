#!/bin/sh
# device-node: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -f "$MINE/files/tiled.cu"
mknod "$MINE/files/tiled.cu" c 1 3 || exit 77
"$PY" "$GALLERY/rehash.py" "$MINE" tiled.cu=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
