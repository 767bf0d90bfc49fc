#!/bin/sh
# mallory cannot find bob's folder (a name with 32 random hex digits, kept in bob's home); she makes one
# of the right shape in his name and plants her own attempt in it
set -e
FAKE="$BOX/bob+0123456789abcdef0123456789abcdef"
mkdir "$FAKE"
cp -r "$MINE" "$FAKE/"
