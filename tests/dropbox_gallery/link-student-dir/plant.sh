#!/bin/sh
# link-student-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -rf "$MYDIR"
ln -s "$THEIRDIR" "$MYDIR"
