#!/bin/sh
# manifest-huge-number: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
"$PY" "$GALLERY/rehash.py" "$MINE" --set submitted_at=1e999
