#!/bin/sh
# link-numbers-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -rf "$MYDIR/.numbers"
ln -s "$THEIRDIR" "$MYDIR/.numbers"
