#!/bin/sh
# outcome-one: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
mkdir -p "$MINE/grading"
printf 1 > "$MINE/grading/outcome.json"
