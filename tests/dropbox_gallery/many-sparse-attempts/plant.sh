#!/bin/sh
# many-sparse-attempts: what the student does (tests/dropbox_gallery/README.md: the environment)
set -e
# Forty more attempts of her own, each of 64 stage-named files at the size cap (256 KiB) but sparse:
# 640 MiB to read, no disk used. Each manifest matches its files: every attempt is intact.
"$PY" - "$MYDIR" <<'PY'
import hashlib, json, os, sys
home = sys.argv[1]
cap = 256 * 1024
sha = hashlib.sha256(bytes(cap)).hexdigest()
names = [f"part{k:02d}.cu" for k in range(64)]
files = {n: {"sha256": sha, "bytes": cap} for n in names}
digest = hashlib.sha256("".join(f"{n} {sha}\n" for n in sorted(names)).encode()).hexdigest()
for number in range(2, 42):
    d = os.path.join(home, f"attempt-{number:04d}-20261201T000000Z")
    os.makedirs(os.path.join(d, "files"))
    for n in names:
        with open(os.path.join(d, "files", n), "wb") as f:
            f.truncate(cap)
    with open(os.path.join(d, ".manifest"), "w") as f:
        json.dump({"submitted_at": "2026-12-01T00:00:00Z", "files": files, "attempt_sha256": digest}, f)
    os.rename(os.path.join(d, ".manifest"), os.path.join(d, "manifest.json"))  # as the store does: one rename
PY
