#!/bin/sh
# out-of-range-date: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# Valid ISO 8601, but at the calendar's very end: converting it to UTC leaves the calendar.
"$PY" "$GALLERY/rehash.py" "$MINE" --set 'submitted_at="9999-12-31T23:59:59-23:59"' --set 'stored_at="9999-12-31T23:59:59-23:59"'
