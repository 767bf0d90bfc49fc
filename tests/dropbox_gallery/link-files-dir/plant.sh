#!/bin/sh
# link-files-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -rf "$MINE/files"
ln -s "$THEIRS/files" "$MINE/files"
"$PY" "$GALLERY/rehash.py" "$MINE" --files-json "$THEIR_FILES_JSON"
