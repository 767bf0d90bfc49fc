#!/bin/sh
# number-past-the-names: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# A number the store would count up from to past what an attempt's name may hold, one that
# str.isdigit() takes but int() does not read, and one longer than an attempt's name holds.
mkdir -p "$MYDIR/.numbers"
touch "$MYDIR/.numbers/999999995" "$MYDIR/.numbers/²" "$MYDIR/.numbers/12345678901"
