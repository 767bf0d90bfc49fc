#!/bin/sh
# undated-attempt-name: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# A name the store's pattern takes, whose digits are no date: month 13, hour 99.
mkdir "$MYDIR/attempt-0009-20261399T999999Z"
