#!/bin/sh
# manifest-nan: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
"$PY" "$GALLERY/rehash.py" "$MINE" --set submitted_at=NaN
