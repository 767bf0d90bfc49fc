#!/bin/sh
# rename-decided-attempt: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
mv "$MINE" "$MYDIR/attempt-0002-${MINE##*-}"
