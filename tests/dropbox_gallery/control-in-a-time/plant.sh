#!/bin/sh
# control-in-a-time: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# Python reads an ISO time whose date and time are parted by any one character, ESC included: her
# manifest's times carry one. (Rewriting the manifest makes her attempt a case for a person: the TA
# settles it, and reads what the settle prints.)
"$PY" "$GALLERY/rehash.py" "$MINE" --set 'submitted_at="2026-12-01\u001b00:00:00Z"' \
    --set 'stored_at="2026-12-01\u001b00:00:00Z"'
