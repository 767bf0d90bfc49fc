#!/bin/sh
# race-swap-after-open: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
: # nothing before the sweep: swap.sh runs while the door reads the attempt
