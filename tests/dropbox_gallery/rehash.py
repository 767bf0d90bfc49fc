#!/usr/bin/env python3
"""rehash.py ATTEMPT [NAME=SHA256 ...] [--files-json FILE] [--claim DIGEST] [--set KEY=JSON ...]

What a determined student does after planting something in an attempt: rewrite its manifest.json so
that it matches. Each file of ATTEMPT/files/ gets its sha256 (read as this account; NAME=SHA256
gives one it cannot read, e.g. a link to another's file, or a FIFO), --files-json takes the whole
`files` table from a JSON file, attempt_sha256 is computed from the table unless --claim gives one,
and --set puts a raw JSON value under a key (e.g. --set 'submitted_at=1e999'), written as text.
"""
import hashlib
import json
import sys
from pathlib import Path

args = sys.argv[1:]
attempt = Path(args.pop(0))
manifest_text = (attempt / "manifest.json").read_text()
m = json.loads(manifest_text)
given, claim, raw, files_json = {}, None, {}, None
while args:
    a = args.pop(0)
    if a == "--claim":
        claim = args.pop(0)
    elif a == "--files-json":
        files_json = json.loads(Path(args.pop(0)).read_text())
    elif a == "--set":
        key, _, value = args.pop(0).partition("=")
        raw[key] = value
    else:
        name, _, sha = a.partition("=")
        given[name] = sha
if files_json is not None:
    m["files"] = files_json
else:
    m["files"] = {}
    for p in sorted((attempt / "files").iterdir()):
        sha = given.get(p.name) or hashlib.sha256(p.read_bytes()).hexdigest()
        m["files"][p.name] = {"sha256": sha, "bytes": 0}
lines = "".join(f"{n} {m['files'][n]['sha256']}\n" for n in sorted(m["files"]))
m["attempt_sha256"] = claim or hashlib.sha256(lines.encode()).hexdigest()
text = json.dumps(m, indent=2)
for key, value in raw.items():  # a raw JSON value (NaN, 1e999) json.dumps would not write
    text = text.replace("{", "{" + f'"{key}": {value}, ', 1) if key not in m else \
        text.replace(f'"{key}": {json.dumps(m[key])}', f'"{key}": {value}', 1)
(attempt / "manifest.json").write_text(text + "\n")
