#!/bin/sh
# withdrawal-mark-made-early: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
cd "$MYDIR"
# Before her due date: a withdrawal mark, in a directory of her own that is no attempt yet.
mkdir held
printf '{"withdrawn_at": "2026-12-01T00:00:00Z", "by": "%s"}\n' "$ME" > held/withdrawn.json
# After it: a late hand-in (the test cannot move the clock: its manifest dates it after the due date,
# as the store dates a hand-in stored then). She sees its feedback, and it is worse than #1's.
late=attempt-0002-20261210T000000Z
mkdir "$late"
cp -r "$MINE/files" "$MINE/manifest.json" "$late/"
"$PY" "$GALLERY/rehash.py" "$late" --set 'submitted_at="2026-12-10T00:00:00Z"' --set 'stored_at="2026-12-10T00:00:00Z"'
# So she moves the late hand-in into the directory holding the early mark, under the hand-in's name.
mv "$late/manifest.json" "$late/files" held/
rmdir "$late"
mv held "$late"
