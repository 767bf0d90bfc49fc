#!/bin/sh
# link-token: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -f "$MYDIR/.token"
ln -s "$THEIRDIR/.token" "$MYDIR/.token"
