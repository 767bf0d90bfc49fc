"""The bottom layer of the cluster tools: how they write a time, hash a file, read and write the
JSON records they keep, and show a person text a student wrote (`escaped`). It imports nothing of the
cluster, so every module may use it.

Times are ISO 8601 in UTC with a Z: `iso` to the microsecond (the moment of a hand-in, a job's start
and end: records that are ordered by it), `iso_seconds` to the second (what a person reads: a state's
creation, a decision). `parse_iso` reads both."""
import datetime as dt
import hashlib
import json
import os
import secrets
from pathlib import Path


def now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def iso(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


def iso_seconds(t: dt.datetime) -> str:
    return t.astimezone(dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_iso(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(s.replace("Z", "+00:00"))


def utc_stamp(t: dt.datetime) -> str:
    """A time as part of a file name: 20261127T183000Z."""
    return t.astimezone(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def escaped(value) -> str:
    """Text a student wrote (a name, a file name, a field of their records, what a compiler quoted of
    their file), safe to print where a person reads it: every character that is not printable — the
    terminal's controls (ESC, BEL, CR, LF, the C1 block), DEL, the invisible and direction-changing
    ones — written as Python's repr writes it (\\x1b, \\r, \\u202e); the rest as it is. A student's
    bytes then can neither drive the reader's terminal nor forge a line of the staff's output."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_json(path: Path):
    """The JSON in `path`, or None where it cannot be read or is not JSON."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def write_atomic(path: Path, data, mode=None, switch=True) -> Path:
    """Write `path` whole (text or bytes), with `mode` where given, through a file beside it that
    replaces it in one rename. switch=False: only the file that would replace it (returned), for the
    caller to os.replace once the rest is done."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if not switch:
        return tmp
    os.replace(tmp, path)
    return path


def write_json_atomic(path: Path, data, mode=None) -> Path:
    return write_atomic(path, json.dumps(data, indent=2) + "\n", mode)


def duration_text(d: dt.timedelta) -> str:
    """A duration as a person says it: '1 day 3 h 5 min', '40 min', '12 s'."""
    secs = int(d.total_seconds())
    days, rest = divmod(secs, 86400)
    hours, rest = divmod(rest, 3600)
    mins, secs = divmod(rest, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{mins} min"] if mins and not days else []
    return " ".join(parts) or f"{secs} s"
