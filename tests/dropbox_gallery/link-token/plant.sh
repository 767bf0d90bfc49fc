#!/bin/sh
# link-token: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
rm -f "$BOX/$ME/.token"
ln -s "$BOX/$VICTIM/.token" "$BOX/$ME/.token"
