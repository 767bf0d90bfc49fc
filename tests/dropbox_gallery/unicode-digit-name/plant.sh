#!/bin/sh
# unicode-digit-name: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# Arabic-Indic digits: \d of a Unicode pattern takes them, int() reads them, strptime does not.
mkdir "$MYDIR/attempt-٠٠٠٩-20261130T120000Z"
mkdir "$MYDIR/attempt-0008-٢٠٢٦١١٣٠T120000Z"
