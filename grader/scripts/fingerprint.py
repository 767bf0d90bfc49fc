#!/usr/bin/env python3
"""fingerprint.py — the content hash of a submission's stage files: the one name of "these files"
that a grade (results.json), a lab report (its first page and PDF metadata), the tuning history and
the drop box all carry, so any two of them can be compared.

The definition (scheme gemmlab-fingerprint/1):

  * the stage files are the regular files named *.cu directly in the submission directory
    (student/, or an attempt's files/ in the drop box): exactly what the Makefile compiles and
    what `make submit` hands in;
  * each file contributes the line "<sha256 of its bytes, 64 lowercase hex>  <file name>\\n";
  * the lines are sorted by file name (byte order of the UTF-8 name) and concatenated;
  * the fingerprint is "sha256:" + the sha256 of that text.

Only names and bytes count: not the directory's path, file times, modes or the machine, so the
student's checkout, the drop box and the grading job's scratch copy give the same answer. The lines
are those of sha256sum, so it can be recomputed by hand:

    (cd student && LC_ALL=C sha256sum *.cu) | sha256sum

The report's PDF carries it in its Keywords as "gemmlab-fingerprint=sha256:..." (with the
submission's name and a short hash of each file); `read_report_stamp` reads that back without any
PDF tool (make submit compares it with the files handed in).

  fingerprint.py student                      print the fingerprint
  fingerprint.py student --json FILE          write {scheme, name, fingerprint, files} (make grade)
  fingerprint.py --report report/report.pdf   print the stamp a report carries
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import zlib
from pathlib import Path

SCHEME = "gemmlab-fingerprint/1"
PREFIX = "sha256:"
STAGE_SUFFIX = ".cu"
SHORT = 16  # hex digits of each file's hash in a report's metadata: enough to name the files that differ


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stage_paths(directory) -> dict[str, Path]:
    """name -> path of the stage files of a submission directory."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"{directory}: no such submission directory")
    return {p.name: p for p in directory.iterdir() if p.name.endswith(STAGE_SUFFIX) and p.is_file()}


def combine(digests: dict[str, str]) -> str:
    """The fingerprint of {file name: sha256 hex of its bytes}."""
    names = sorted(digests, key=lambda n: n.encode("utf-8"))
    text = "".join(f"{digests[n]}  {n}\n" for n in names)
    return PREFIX + sha256_bytes(text.encode("utf-8"))


def of_files(files: dict) -> dict:
    """{scheme, fingerprint, files: {name: "sha256:..."}} of name -> path (the stage files only)."""
    digests = {n: sha256_file(p) for n, p in files.items() if n.endswith(STAGE_SUFFIX)}
    return {"scheme": SCHEME, "fingerprint": combine(digests),
            "files": {n: PREFIX + d for n, d in sorted(digests.items())}}


def of_directory(directory) -> dict:
    """of_files of a submission directory, with its name (the directory's last component)."""
    directory = Path(directory)
    return {"name": directory.resolve().name, **of_files(stage_paths(directory))}


# ---- what a report carries -------------------------------------------------------------------

def report_keywords(fp: dict) -> list[str]:
    """The keywords a report made from measurements of submission `fp` (of_directory) carries."""
    files = ";".join(f"{n}:{d.removeprefix(PREFIX)[:SHORT]}" for n, d in sorted(fp["files"].items()))
    return [f"gemmlab-submission={fp['name']}", f"gemmlab-fingerprint={fp['fingerprint']}",
            f"gemmlab-files={files}"]


EXAMPLE_KEYWORD = "gemmlab-example-data"  # the demo report: the instructor's example measurements
_STAMP = re.compile(r"gemmlab-(submission|fingerprint|files)=([^,\s]*)|(" + EXAMPLE_KEYWORD + ")")


def parse_stamp(keywords: str) -> dict:
    """{submission, fingerprint, files: {name: short hash}, example: bool} from a Keywords text."""
    out = {"submission": None, "fingerprint": None, "files": {}, "example": False}
    for m in _STAMP.finditer(keywords or ""):
        key, value, example = m.groups()
        if example:
            out["example"] = True
        elif key == "files":
            out["files"] = dict(item.split(":", 1) for item in value.split(";") if ":" in item)
        else:
            out[key] = value
    if out["fingerprint"] and not re.fullmatch(PREFIX + "[0-9a-f]{64}", out["fingerprint"]):
        out["fingerprint"] = None
    return out


def _pdf_string(raw: bytes) -> str:
    """A PDF string object, <hex> or (literal), as text (UTF-16BE with a BOM, else Latin-1)."""
    if raw.startswith(b"<"):
        data = bytes.fromhex(re.sub(rb"\s", b"", raw[1:-1]).decode("ascii"))
    else:
        body, data, i = raw[1:-1], bytearray(), 0
        escapes = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}
        while i < len(body):
            c = body[i:i + 1]
            if c == b"\\" and i + 1 < len(body):
                nxt = body[i + 1:i + 2]
                octal = re.match(rb"[0-7]{1,3}", body[i + 1:i + 4])
                if octal:
                    data.append(int(octal.group(), 8) & 0xFF)
                    i += 1 + len(octal.group())
                    continue
                data += escapes.get(nxt, nxt if nxt not in b"\r\n" else b"")
                i += 2
                continue
            data += c
            i += 1
        data = bytes(data)
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", errors="replace")
    return data.decode("latin-1")


_KEYWORDS = re.compile(rb"/Keywords\s*(<[0-9A-Fa-f\s]*>|\((?:\\.|[^\\)])*\))", re.S)


def pdf_keywords(pdf) -> str | None:
    """The Keywords of a PDF's document information, read from its bytes and from every Flate
    stream (xelatex keeps the information dictionary in a compressed object stream); None when the
    file has none. Needs no PDF tool, so `make submit` works on a login node without poppler.
    pdf: a path, or the bytes of the file (as the drop box's door read them)."""
    data = bytes(pdf) if isinstance(pdf, (bytes, bytearray)) else Path(pdf).read_bytes()
    chunks = [data]
    for m in re.finditer(rb"stream\r?\n", data):
        end = data.find(b"endstream", m.end())
        if end < 0:
            break
        try:
            chunks.append(zlib.decompressobj().decompress(data[m.end():end]))
        except zlib.error:
            continue
    for chunk in chunks:
        found = _KEYWORDS.findall(chunk)
        if found:
            return _pdf_string(found[-1])
    return None


def read_report_stamp(pdf) -> dict:
    """parse_stamp of a report PDF's Keywords (every field empty for a PDF that carries none)."""
    return parse_stamp(pdf_keywords(pdf) or "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0].split("— ", 1)[-1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("submission", nargs="?", help="the submission directory (laid out like student/)")
    ap.add_argument("--json", help="write {scheme, name, fingerprint, files} to this file")
    ap.add_argument("--report", help="print the submission and fingerprint a report PDF carries")
    args = ap.parse_args(argv)
    if args.report:
        print(json.dumps(read_report_stamp(args.report), indent=2))
        return 0
    if not args.submission:
        ap.error("name a submission directory (or --report PDF)")
    try:
        fp = of_directory(args.submission)
    except FileNotFoundError as e:
        print(f"fingerprint: {e}", file=sys.stderr)
        return 2
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(fp, indent=2) + "\n")
        os.replace(tmp, out)
    else:
        print(fp["fingerprint"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
