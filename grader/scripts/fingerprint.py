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


# What reading a report's Keywords may cost: a report is a student's file, read on the staff's login
# node by every sweep and by `make submit`, so each bound is a small multiple of what `make report`
# writes (its object streams inflate to some tens of KiB, its Keywords to a few KiB, it has a few
# hundred streams). A report past a bound is not read: UnreadableReport says which and why.
STREAM_CAP = 4 << 20     # bytes an object stream may inflate to
TOTAL_CAP = 16 << 20     # bytes all the object streams of a report may inflate to together
MAX_STREAMS = 10_000     # streams of any kind in a report
STRING_CAP = 64 << 10    # bytes of the Keywords string (as written: hex or escaped)
_HEADER_CAP = 1024       # bytes before `stream` looked at for the stream's dictionary

_HEX_STRING = re.compile(rb"<[0-9A-Fa-f\s]*>")
_LITERAL_STRING = re.compile(rb"\((?:\\.|[^\\)])*\)", re.S)  # the two branches never start alike: linear
_WHITESPACE = re.compile(rb"\s*")


class UnreadableReport(ValueError):
    """A report past one of the bounds above: not read (its stamp is treated as absent)."""


def _last_keywords(chunk: bytes) -> bytes | None:
    """The last /Keywords string object (as written: <hex> or (literal)) in chunk, in one forward
    pass: a string is matched within STRING_CAP bytes, and the search goes on after the string, or
    after all that was looked at for it, so no byte is looked at more than a few times."""
    found, pos = None, 0
    while (key := chunk.find(b"/Keywords", pos)) >= 0:
        start = _WHITESPACE.match(chunk, key + len(b"/Keywords")).end()
        stop = start + STRING_CAP
        opener = chunk[start:start + 1]
        if opener == b"<":
            m = _HEX_STRING.match(chunk, start, stop)
            pos = m.end() if m else start + 1  # a hex run holds no `/`: the next search passes it in one go
        elif opener == b"(":
            m = _LITERAL_STRING.match(chunk, start, stop)
            pos = m.end() if m else stop  # no `)` closes it within the cap: all of that was looked at
        else:
            m, pos = None, start + 1
        if m:
            found = m.group()
    return found


def _object_streams(data: bytes):
    """The inflated contents of the Flate object streams (/Type/ObjStm) of a PDF, in order, one at a
    time: where the document information sits when it is not in the file's plain text (xelatex).
    Pages, fonts and images cannot hold it and are not inflated. One forward pass over data; raises
    UnreadableReport past MAX_STREAMS, STREAM_CAP or TOTAL_CAP."""
    view, pos, after_last, streams, total = memoryview(data), 0, 0, 0, 0
    while (keyword := data.find(b"stream", pos)) >= 0:
        pos = keyword + len(b"stream")
        eol = 2 if data[pos:pos + 2] == b"\r\n" else 1 if data[pos:pos + 1] == b"\n" else 0
        if not eol or data[keyword - 3:keyword] == b"end":
            continue  # the word, or the end of a stream passed by (not the keyword that starts one)
        end = data.find(b"endstream", pos + eol)
        if end < 0:
            return
        streams += 1
        if streams > MAX_STREAMS:
            raise UnreadableReport(f"it has more than {MAX_STREAMS} streams (a report has a few hundred)")
        dictionary = data[max(after_last, keyword - _HEADER_CAP):keyword]  # this stream's own, at most
        body = view[pos + eol:end]
        pos = after_last = end + len(b"endstream")
        if b"/ObjStm" not in dictionary or b"/FlateDecode" not in dictionary:
            continue
        try:
            inflated = zlib.decompressobj().decompress(body, STREAM_CAP + 1)
        except zlib.error:
            continue
        if len(inflated) > STREAM_CAP:
            raise UnreadableReport(f"its object stream {streams} inflates to more than {STREAM_CAP >> 20} MiB "
                                   "(a report's inflate to some KiB)")
        total += len(inflated)
        if total > TOTAL_CAP:
            raise UnreadableReport(f"its object streams inflate to more than {TOTAL_CAP >> 20} MiB together "
                                   "(a report's to some KiB)")
        yield inflated


def pdf_keywords(pdf) -> str | None:
    """The Keywords of a PDF's document information, read from its plain text or else from its Flate
    object streams (xelatex keeps the information dictionary in one); None when the file has none.
    Needs no PDF tool, so `make submit` works on a login node without poppler; costs time linear in
    the file and bounded memory (raises UnreadableReport past a bound above).
    pdf: a path, or the bytes of the file (as the drop box's door read them)."""
    data = bytes(pdf) if isinstance(pdf, (bytes, bytearray)) else Path(pdf).read_bytes()
    found = _last_keywords(data)
    if found is None:
        for chunk in _object_streams(data):
            found = _last_keywords(chunk)
            if found is not None:
                break
    return _pdf_string(found) if found is not None else None


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
        try:
            print(json.dumps(read_report_stamp(args.report), indent=2))
        except UnreadableReport as e:
            print(f"fingerprint: {args.report} is not read: {e}. Make it again with `make report`.", file=sys.stderr)
            return 2
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
