#!/bin/sh
# squatted-directory: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
mkdir "$BOX/bob"
cp -r "$MINE" "$BOX/bob/"
