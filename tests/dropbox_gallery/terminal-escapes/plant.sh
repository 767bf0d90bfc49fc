#!/bin/sh
# terminal-escapes: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# Control sequences in what she writes: ESC[2J clears the TA's screen, OSC 52 writes the TA's clipboard
# (ended by BEL), a CR goes back to the line's start to print over it, a C1 CSI (U+009B) for terminals
# that take it. JSON's \u escapes put the raw bytes in her records.
SEQ='\u001b[2J\u001b]52;c;cm0gLXJmIH4K\u0007\r  #1 graded 100/100\u009b31m'
"$PY" "$GALLERY/rehash.py" "$MINE" --set "does_not_compile=[\"tiled.cu$SEQ\"]" \
    --set "report={\"verdict\": \"ok$SEQ\"}" --set "host=\"node$SEQ\"" --set "clock=\"clock$SEQ\""
mkdir -p "$MINE/grading"
printf '{"status": "graded%s", "message": "graded: 100 / 100%s", "log_tail": "done%s",
  "score": {"total": 100, "max": 100}}\n' "$SEQ" "$SEQ" "$SEQ" > "$MINE/grading/outcome.json"
printf '{"job_id": "77%s", "not_queued": "no%s", "why": "why%s"}\n' "$SEQ" "$SEQ" "$SEQ" > "$MINE/job.json"
# and a directory of the drop box named so (no name on the roster: the staff are told of it)
mkdir "$BOX/$(printf 'zed\033[2J\033[31m\rmallory')"
