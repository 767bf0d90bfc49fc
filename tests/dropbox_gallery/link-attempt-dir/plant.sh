#!/bin/sh
# link-attempt-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
ln -s "$THEIRS" "$BOX/$ME/attempt-0002-20261204T235900Z"
