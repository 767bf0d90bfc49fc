#!/bin/sh
# manifest-list: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
printf '%s' '[]' > "$MINE/manifest.json"
