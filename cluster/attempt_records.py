"""attempt_records.py — what an attempt is named and holds, and the schemas its records are read
with: the names of an attempt's directory and files (the writing side, dropbox.py, and the door,
attempts.py, both take them from here), its digest, what its report says about its stage files, the
caps of what is read, and JSON records checked for their types. A record that breaks its schema is a
Case, for a person. It opens nothing: attempts.py, the one door into the drop box, reads the bytes.
"""
import datetime as dt
import hashlib
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from records import parse_iso

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader" / "scripts"))
import fingerprint  # noqa: E402  (the one definition of a submission's fingerprint)


# ---- what an attempt is named and holds --------------------------------------------------------
ATTEMPT_RE = re.compile(r"^attempt-([0-9]{4,9})-([0-9]{8}T[0-9]{6}Z)\Z")  # ASCII digits only; \Z: no trailing newline
# A hand-in the course staff entered for a student (e-mailed files, with their original time): kept
# in the staff's area (entered_dir), numbered on its own: E1, E2, ...
ENTERED_RE = re.compile(r"^entered-([0-9]{4,9})-([0-9]{8}T[0-9]{6}Z)\Z")
MAX_NUMBER = 999_999_999  # the largest attempt number the names above hold
MANIFEST_SCHEMA = "gemmlab.attempt/1"
REPORT_NAME = "report.pdf"
# A student's own mark on an attempt they take back (`make withdraw`): the attempt stays in the drop
# box, but no sweep counts it — so an earlier one counts instead (under the `latest` policy, the
# way to keep an on-time grade after a late hand-in). Removing it (`make withdraw UNDO=1`) undoes it.
WITHDRAWN_NAME = "withdrawn.json"


def attempt_digest(files: dict) -> str:
    """One hash for a whole attempt: its file names and contents (not its time or number)."""
    lines = "".join(f"{name} {files[name]['sha256']}\n" for name in sorted(files))
    return hashlib.sha256(lines.encode()).hexdigest()


# What a hand-in's report says about the stage files beside it (report_check): "ok" (the report was
# made from measurements of exactly these files), "mismatch" (of other files), "unstamped" (it names
# no files: an old report, one not made by `make report`, or one past what reading a report may cost,
# fingerprint.UnreadableReport, which `unreadable` then names), "example" (the demo report of the
# instructor's example data, `make report-demo`), "none" (no report handed in).
REPORT_VERDICTS = ("ok", "mismatch", "unstamped", "example", "none")


def report_check(files: dict) -> dict:
    """{verdict, stages, report, report_submission, differ, unreadable} for a hand-in's name -> path (the student's
    own files) or name -> bytes (a stored hand-in, as attempts.py read it): the fingerprint of its
    stage files against the one its report.pdf carries (grader/scripts/fingerprint.py; `differ` names
    the stage files whose hash is not the report's; `unreadable` why the report was not read, or None)."""
    data = {n: v if isinstance(v, (bytes, bytearray)) else Path(v).read_bytes() for n, v in files.items()}
    mine = {n: fingerprint.sha256_bytes(b) for n, b in data.items() if n.endswith(fingerprint.STAGE_SUFFIX)}
    stages = fingerprint.combine(mine)
    out = {"verdict": "none", "stages": stages, "report": None, "report_submission": None, "differ": [],
           "unreadable": None}
    if REPORT_NAME not in data:
        return out
    try:
        stamp = fingerprint.read_report_stamp(data[REPORT_NAME])
    except fingerprint.UnreadableReport as e:
        stamp, out["unreadable"] = fingerprint.parse_stamp(""), str(e)
    except (OSError, ValueError):
        stamp = fingerprint.parse_stamp("")
    out.update(report=stamp["fingerprint"], report_submission=stamp["submission"])
    if stamp["example"]:
        out["verdict"] = "example"
    elif not stamp["fingerprint"]:
        out["verdict"] = "unstamped"
    elif stamp["fingerprint"] == stages:
        out["verdict"] = "ok"
    else:
        out["verdict"] = "mismatch"
        theirs = stamp["files"]  # name -> the first digits of its sha256
        out["differ"] = sorted(n for n in set(mine) | set(theirs)
                               if n not in mine or n not in theirs or not mine[n].startswith(theirs[n]))
    return out


# The caps of what is read: a stage file and a report as the course allows ([cluster] max_source_kb,
# max_report_mb; the defaults where no course is given), and every JSON record a fixed small size.
RECORD_CAP = 256 * 1024
RESULTS_CAP = 8 * 1024 * 1024      # a grading's results.json (written by the grader, in the student's job)
TOKEN_CAP = 128
DEFAULT_SOURCE_KB, DEFAULT_REPORT_MB = 256, 20
FILE_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,127}\Z")
# The most files one attempt holds: `make submit` stores the stage files and the report. With the caps
# above, it bounds what the staff's process holds of one attempt (MAX_FILES x the source cap).
MAX_FILES = 64
SHA256_RE = re.compile(r"^[0-9a-f]{64}\Z")



class Case(Exception):
    """What a person must look at: the message says whose, where and what (never a traceback)."""


@dataclass(frozen=True)
class Caps:
    source: int
    report: int

    def of(self, name: str) -> int:
        return self.report if name == REPORT_NAME else self.source


def caps(cfg=None) -> Caps:
    kb = getattr(cfg, "max_source_kb", None) or DEFAULT_SOURCE_KB
    mb = getattr(cfg, "max_report_mb", None) or DEFAULT_REPORT_MB
    return Caps(int(kb) * 1024, int(mb) * 1024 * 1024)



# ---- records: JSON with a schema ---------------------------------------------------------------
def parse_json(data: bytes, where: str):
    """JSON as the drop box may hold it: UTF-8, no NaN or Infinity, finite numbers, bounded nesting."""
    def no_constant(name):
        raise ValueError(f"{name} is not a JSON number")

    def finite(text):
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text[:20]} is too large a number")
        return value
    try:
        return json.loads(data.decode("utf-8"), parse_constant=no_constant, parse_float=finite)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise Case(f"{where} is not valid JSON ({str(e)[:120]})") from None


def _types(record, spec: dict, where: str, required=()) -> dict:
    """record, when it is a JSON object whose keys named in spec have those types (and the required
    ones are there); else Case."""
    if not isinstance(record, dict):
        raise Case(f"{where} is not a JSON object (it holds {type(record).__name__} {json.dumps(record)[:40]})")
    for key in required:
        if key not in record:
            raise Case(f"{where} has no {key!r}")
    for key, types in spec.items():
        if key in record and record[key] is not None and (
                not isinstance(record[key], types) or isinstance(record[key], bool) and bool not in _tuple(types)):
            raise Case(f"{where}: {key!r} is {type(record[key]).__name__}, not {_names(types)}")
    return record


def _tuple(types):
    return types if isinstance(types, tuple) else (types,)


def _names(types) -> str:
    return " or ".join({"str": "a text", "int": "an integer", "float": "a number", "dict": "an object",
                        "list": "a list", "bool": "true/false"}.get(t.__name__, t.__name__) for t in _tuple(types))


NUMBER = (int, float)


# The times a record may hold: a hand-in's, a job's. Outside them a time is no time of this course, and
# arithmetic on it (a time zone, a late penalty's days) could leave the calendar.
EARLIEST, LATEST = dt.datetime(1971, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(9000, 1, 1, tzinfo=dt.timezone.utc)
# A time as the tools write one (records.iso): ASCII digits, a 'T', a zone. Python's fromisoformat alone
# takes any one character between the date and the time (a control character too, which the staff's
# commands would then print) and digits of other scripts.
TIME_RE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})\Z")


def check_time(value, where: str, key: str) -> dt.datetime:
    try:
        if not TIME_RE.match(value):
            raise ValueError(value)
        t = parse_iso(value)
    except (TypeError, ValueError, AttributeError):
        raise Case(f"{where}: {key!r} is not a time ({str(value)[:40]!r})") from None
    if t.tzinfo is None:
        raise Case(f"{where}: {key!r} has no time zone ({str(value)[:40]!r})")
    try:
        in_range = EARLIEST <= t <= LATEST
    except OverflowError:
        in_range = False
    if not in_range:
        raise Case(f"{where}: {key!r} is {str(value)[:40]!r}, not a time between {EARLIEST.year} and {LATEST.year}")
    return t


def check_manifest(record, where: str) -> dict:
    m = _types(record, {"schema": str, "course": str, "user": str, "uid": int, "submitted_at": str, "stored_at": str,
                        "clock": str, "host": str, "files": dict, "attempt_sha256": str, "git": dict, "report": dict,
                        "does_not_compile": list,
                        "course_state": str, "entered_by": str, "why": str},
               where, required=("submitted_at", "files"))
    check_time(m["submitted_at"], where, "submitted_at")
    if m.get("stored_at") is not None:
        check_time(m["stored_at"], where, "stored_at")
    for name, entry in m["files"].items():
        if not FILE_NAME_RE.match(name):
            raise Case(f"{where}: {name[:40]!r} is not a file name a hand-in holds")
        _types(entry, {"sha256": str, "bytes": int}, f"{where}: files[{name!r}]", required=("sha256",))
        if not SHA256_RE.match(entry["sha256"]):
            raise Case(f"{where}: files[{name!r}] has no sha256 (64 hex digits)")
    return m


def check_outcome(record, where: str) -> dict:
    o = _types(record, {"status": str, "message": str, "score": dict, "job_id": (str, int), "started": str,
                        "finished": str, "log_tail": str, "attempt_sha256": str, "gpu": dict, "node": str,
                        "host": str}, where, required=("status",))
    if o.get("score") is not None:
        _types(o["score"], {"total": NUMBER, "max": NUMBER}, f"{where}: score", required=("total", "max"))
    for key in ("started",):
        if o.get(key):
            check_time(o[key], where, key)
    return o


def check_results(record, where: str) -> dict:
    r = _types(record, {"score": dict, "results": list, "status": str}, where)
    score = r.get("score") or {}
    _types(score, {"total": NUMBER, "max": NUMBER, "stages": list}, f"{where}: score")
    for row in score.get("stages") or []:
        _types(row, {"stage": str, "precision": str, "variant_used": str, "disposition": str, "correctness": NUMBER,
                     "performance": NUMBER, "correctness_max": NUMBER, "performance_max": NUMBER},
               f"{where}: score.stages[]", required=("stage", "precision"))
    return r


def check_job(record, where: str) -> dict:
    j = _types(record, {"job_id": (str, int), "queued": str, "not_queued": str, "why": str, "at": str}, where)
    if not j.get("job_id") and not j.get("not_queued"):
        raise Case(f"{where} names no job (no 'job_id') and no reason it was not queued ('not_queued')")
    if j.get("queued"):
        check_time(j["queued"], where, "queued")
    return j


def check_withdrawn(record, where: str) -> dict:
    return _types(record, {"withdrawn_at": str, "by": str}, where)


RECORDS = {"job.json": (check_job, RECORD_CAP), "grading/outcome.json": (check_outcome, RECORD_CAP),
           "grading/results.json": (check_results, RESULTS_CAP)}

