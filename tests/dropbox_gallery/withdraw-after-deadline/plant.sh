#!/bin/sh
# withdraw-after-deadline: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
printf '{"withdrawn_at": "2025-01-05T23:00:00Z", "by": "%s"}\n' "$ME" > "$MINE/withdrawn.json"
