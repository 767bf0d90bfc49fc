#!/bin/sh
# link-numbers-dir: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -rf "$BOX/$ME/.numbers"
ln -s "$BOX/$VICTIM" "$BOX/$ME/.numbers"
