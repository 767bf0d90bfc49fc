#!/bin/sh
# off-roster-directory: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
mkdir "$BOX/zed"
cp -r "$MINE" "$BOX/zed/"
