#!/bin/sh
# manifest-one: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
printf '%s' '1' > "$MINE/manifest.json"
