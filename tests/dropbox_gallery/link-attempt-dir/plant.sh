#!/bin/sh
# link-attempt-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
ln -s "$THEIRS" "$MYDIR/attempt-0002-20261204T235900Z"
