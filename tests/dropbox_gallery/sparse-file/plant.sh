#!/bin/sh
# sparse-file: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
truncate -s 16G "$MINE/files/report.pdf"
"$PY" "$GALLERY/rehash.py" "$MINE" report.pdf=0000000000000000000000000000000000000000000000000000000000000000
