"""A fuzzer over the drop box: for each seed, one student of a small class plants random oddities —
names (Unicode digits, pattern-shaped non-dates, long ones), extreme and malformed dates, hostile
JSON in every record, odd file types, huge counts and depths — and the staff's tools must still plan,
grade and export everyone else, answer for that student without a traceback, and make every oddity
inside the attempt that would count a case for a person.

`make test` runs a fixed set of seeds (SEEDS). A longer run, for the staff before a term:

    GEMMLAB_FUZZ_SEEDS=500 python3 -m pytest -q tests/py/cluster/test_dropbox_fuzz.py

(GEMMLAB_FUZZ_SEEDS=N runs seeds 0..N-1; GEMMLAB_FUZZ_SEED=K runs seed K alone, to replay a failure.)
"""
import contextlib
import csv
import json
import os
import random
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from support import staff_class
from support.cluster_helpers import folder, time_limit, tool

import config  # noqa: E402  (cluster/, on sys.path through staff_class)
import dropbox  # noqa: E402
from commands import sweep as sweep_commands  # noqa: E402

HONEST = ["alice", "bob", "carol"]
TARGET = "mallory"
CLASS = HONEST + [TARGET]
TIME_LIMIT = 120


def _seeds():
    if os.environ.get("GEMMLAB_FUZZ_SEED"):
        return [int(os.environ["GEMMLAB_FUZZ_SEED"])]
    return list(range(int(os.environ.get("GEMMLAB_FUZZ_SEEDS", "6"))))


SEEDS = _seeds()

# ---- what a student can put where -------------------------------------------------------------
DATES = ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59", "2026-13-45T99:99:99Z", "", "2026-12-01",
         "2026-12-01T00:00:00", "1e308", "\u0662\u0660\u0662\u0666-12-01T00:00:00Z", "2026-12-01T00:00:00Z\u202e",
         "9" * 400]
JSON_VALUES = ['1e999', '-1e999', 'NaN', 'null', '[]', '{}', '"\\ud800"', '"\\u0000\\u001b[2J"', '18446744073709551617',
               '[' * 5000 + ']' * 5000, '{"a":' * 3000 + '1' + '}' * 3000, 'true', '"x"']


def hostile_json(rng: random.Random) -> bytes:
    """A record's bytes: JSON of the wrong shape or no JSON at all."""
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice(JSON_VALUES).encode()
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
    if kind == 2:
        return b"\xef\xbb\xbf" + json.dumps({"submitted_at": rng.choice(DATES), "files": {}}).encode()
    if kind == 3:
        return ('{"files": ' + rng.choice(JSON_VALUES) + ', "submitted_at": ' + json.dumps(rng.choice(DATES)) + '}').encode()
    if kind == 4:
        return b'{"status": "graded", "score": {"total": ' + rng.choice(JSON_VALUES).encode() + b', "max": 100}}'
    return b'{"a": "' + b"x" * rng.choice([10, 300_000]) + b'"}'  # past a record's cap, or not


def odd_name(rng: random.Random) -> str:
    digits = "0123456789\u0660\u0661\u0662\u06f3\u0969\uff11"
    kind = rng.randrange(5)
    if kind == 0:  # the pattern's shape, any digits
        d = lambda n: "".join(rng.choice(digits) for _ in range(n))  # noqa: E731
        return f"attempt-{d(4)}-{d(8)}T{d(6)}Z"
    if kind == 1:
        return f"attempt-{rng.randrange(10**12)}-20261201T000000Z"
    if kind == 2:
        return "a" * rng.randrange(200, 250)
    if kind == 3:
        return rng.choice(["grading", ".token", "-rf", "..\u2024", "attempt-0001-20261201T000000Z\n", " "])
    return f"attempt-{rng.randrange(1, 9999):04d}-2026{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}T000000Z"


def plant_inside(rng: random.Random, attempt: Path, box: Path) -> str:
    """One oddity inside the attempt that would count; returns what it is (for the failure message)."""
    kind = rng.randrange(9)
    files = attempt / "files"
    if kind == 0:
        (attempt / "manifest.json").write_bytes(hostile_json(rng))
        return "manifest: hostile JSON"
    if kind == 1:
        m = json.loads((attempt / "manifest.json").read_text())
        m[rng.choice(["submitted_at", "stored_at"])] = rng.choice(DATES)
        (attempt / "manifest.json").write_text(json.dumps(m))
        return "manifest: a date"
    if kind == 2:
        os.mkfifo(files / "pipe.cu")
        return "files/: a FIFO"
    if kind == 3:
        (files / "tiled.cu").unlink()
        (files / "tiled.cu").symlink_to(rng.choice(["/etc/shadow", "/dev/zero", str(box / "alice")]))
        return "files/: a link"
    if kind == 4:
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(files / "sock.cu"))
        s.close()
        return "files/: a socket"
    if kind == 5:
        with open(files / "tiled.cu", "r+b") as f:
            f.truncate(rng.choice([10 << 20, 10 << 30]))  # sparse: costs no disk
        return "files/: a huge file"
    if kind == 6:
        d = files / "deep.cu"
        for _ in range(rng.randrange(50, 200)):
            d = d / "d"
        d.mkdir(parents=True)
        return "files/: a deep directory"
    if kind == 7:
        for i in range(rng.randrange(500, 3000)):
            (files / f"f{i}.cu").write_bytes(b"")
        return "files/: thousands of files"
    shutil.rmtree(files)
    (attempt / "files").write_bytes(hostile_json(rng))
    return "files/ is a file"


def plant_beside(rng: random.Random, student_dir: Path, template: Path) -> str:
    """One oddity beside the attempts: names, records, counts; returns what it is."""
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(rng.randrange(1, 6)):
            with contextlib.suppress(OSError):
                shutil.copytree(template, student_dir / odd_name(rng), symlinks=True)
        return "attempt-like names"
    if kind == 1:
        for _ in range(rng.randrange(200, 800)):
            with contextlib.suppress(OSError):
                (student_dir / odd_name(rng)).mkdir()
        return "hundreds of names"
    if kind == 2:
        (template / rng.choice(["job.json", "withdrawn.json"])).write_bytes(hostile_json(rng))
        return "a record beside an attempt"
    if kind == 3:
        (template / "grading").mkdir(exist_ok=True)
        (template / "grading" / rng.choice(["outcome.json", "results.json"])).write_bytes(hostile_json(rng))
        return "a grading's record"
    with contextlib.suppress(OSError):  # an earlier oddity may have made .token a directory
        (student_dir / ".token").write_bytes(hostile_json(rng))
    return "the token"


def planted_or_none(plant, *args) -> str | None:
    """What plant() planted, or None where an earlier oddity left no room for it (files/ made a file,
    tiled.cu a directory): that oddity stays, and is the case."""
    try:
        return plant(*args)
    except OSError:
        return None


@pytest.mark.parametrize("seed", SEEDS)
def test_one_students_oddities_are_their_case_and_the_class_is_graded(seed):
    rng = random.Random(seed)
    base = Path(tempfile.mkdtemp(prefix=f"gemmlab-fuzz-{seed}-"))
    try:
        cfg = config.load(staff_class.write_config(base, roster=CLASS))
        dropbox.setup_dirs(cfg)
        stored = {s: staff_class.hand_in(cfg, base, s, {}) for s in CLASS}
        latest = stored[TARGET]
        inside = [what for what in (planted_or_none(plant_inside, rng, latest, cfg.dropbox_dir)
                                    for _ in range(rng.randrange(0, 3))) if what]
        beside = [plant_beside(rng, folder(cfg, TARGET), latest) for _ in range(rng.randrange(1, 4))]
        planted = f"seed {seed}: inside {inside}, beside {beside}"

        with time_limit(TIME_LIMIT, f"the sweep's plan ({planted})"):
            entries = {e["student"]: e for e in sweep_commands.plan_sweep(cfg, when=staff_class.PLANNED)}
        assert set(entries) == set(CLASS), planted
        for s in HONEST:
            e = entries[s]
            assert e["status"] == "selected" and not e.get("review"), (planted, e)
            assert e["attempt"] == str(stored[s]), (planted, e)
        mine = entries[TARGET]
        if inside:  # the attempt that would count is odd: a case for a person, never a grade of it as it is
            assert mine.get("review") or mine.get("attempt") != str(latest), (planted, mine)
        if mine.get("review"):
            assert "Traceback" not in mine["review"], (planted, mine)

        sweep = staff_class.plan(cfg)
        for s in HONEST:
            staff_class.write_grade(sweep, s, staff_class.full_rows())
        r = tool(cfg.path, "gradebook", "--name", "final", timeout=TIME_LIMIT)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (planted, r.stdout + r.stderr)
        with open(sweep / "export" / "grades.csv") as f:
            exported = {row["student"]: row for row in csv.DictReader(f)}
        assert set(exported) == set(CLASS), (planted, sorted(exported))
        for s in HONEST:
            assert exported[s]["total"] not in ("", None), (planted, exported[s])
        for cmd in (("status", "--user", TARGET), ("decisions",), ("results", "--user", TARGET)):
            r = tool(cfg.path, *cmd, timeout=TIME_LIMIT)
            assert "Traceback" not in r.stderr and r.returncode in (0, 1), (planted, cmd, r.stdout + r.stderr)
    finally:
        with contextlib.suppress(OSError):
            for p in base.rglob("*"):  # a planted link or FIFO is removed, never followed
                if p.is_fifo() or p.is_socket():
                    p.unlink()
        shutil.rmtree(base, ignore_errors=True)
