"""The drop-box gallery (tests/dropbox_gallery/): each entry is something a student (or a careless TA)
can plant in the drop box, mounted on a real course and checked through the staff's own tools — the
sweep's planner and grading tasks (a stand-in records what the GPU grader would be given), the
gradebook, `status --user`, decisions. tests/dropbox_gallery/README.md describes an entry's files."""
import contextlib
import csv
import io
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import tracemalloc
from pathlib import Path

import pytest

from support import private_accounts
from support import staff_class
from support.cluster_helpers import PYTHON, TOOL, folder, read_gradebook, time_limit, tool

import attempts  # noqa: E402  (cluster/, on sys.path through staff_class)
import config  # noqa: E402
import student_standing  # noqa: E402
import dropbox  # noqa: E402
import gemmlab_cluster  # noqa: E402  (puts cluster/ and cluster/staff/ on sys.path)
from commands import sweep as sweep_commands  # noqa: E402
import sweep_work  # noqa: E402  (cluster/staff/)
import gradebook  # noqa: E402
import grading  # noqa: E402
import records  # noqa: E402

GALLERY = staff_class.ROOT / "tests" / "dropbox_gallery"
ENTRIES = sorted(p for p in GALLERY.iterdir() if (p / "expected.json").is_file())
CLASS = ["alice", "bob", "mallory"]
ATTACKER, VICTIM = "mallory", "alice"
TIME_LIMIT = 120  # seconds for the sweep, and for each command: a hang is a failure, never a stuck test
# The gallery's course runs each per-student step in a cell of these limits; a sweep with one attacker
# costs at most the honest class's CPU time plus the attacker's cells run out: reading her directory,
# her counted attempt's report and its feedback gradings (ATTACKER_CELLS), each up to its CPU limit.
# CPU time, not wall time: what the sweep spends, however loaded the machine (a sweep that waits
# instead runs into TIME_LIMIT, or a cell into its wall time).
CELLS = "[cells]\nwall_seconds = 10\ncpu_seconds = 5\n"
CELL_CPU_SECONDS, ATTACKER_CELLS = 5, 3
# A terminal's control characters (C0 but tab and newline, DEL, C1): no_raw_controls finds none of them
# in what the staff read. The staff's commands and files that show what a student wrote:
RAW_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
STAFF_VIEWS = [*(["status", "--user", s] for s in CLASS), ["results", "--user", ATTACKER], ["decisions"],
               ["sweep-status"], ["gradebook", "--name", "final"]]


def marker(student: str) -> bytes:
    return f"// {student}'s own work\n".encode()


@pytest.fixture(scope="module")
def accounts():
    """(PrivateAccounts, '') for the class, or (None, why not)."""
    why = private_accounts.available()
    if why:
        yield None, why
        return
    acc = private_accounts.PrivateAccounts({s: [] for s in CLASS}, [])
    try:
        acc.__enter__()
    except OSError as e:
        yield None, str(e)
        return
    try:
        yield acc, ""
    finally:
        acc.__exit__(None, None, None)


def hand_in(cfg, base: Path, student: str, solutions=None) -> Path:
    """The stubs, or {stage: part} of tests/fixtures/similarity/ spliced in, each with the student's marker."""
    src = base / "src" / student
    src.mkdir(parents=True)
    for name in staff_class.STAGE_FILES:
        stage = Path(name).stem
        text = (staff_class.splice(stage, solutions[stage]).encode() if stage in (solutions or {})
                else (staff_class.ROOT / "student" / name).read_bytes())
        (src / name).write_bytes(text + marker(student))
    return dropbox.store_attempt(cfg, student, dropbox.collect(cfg, src, None))


def as_user(acc, who: str) -> list[str]:
    return ["runuser", "-u", who, "--"] if acc is not None and who != "root" else []


def staff(cfg, *args) -> subprocess.CompletedProcess:
    r = tool(cfg.path, *args, timeout=TIME_LIMIT)
    assert "Traceback" not in r.stderr, f"{' '.join(args)}:\n{r.stderr}"
    return r


def cpu_seconds() -> float:
    """The CPU time of this process and of the children it has waited for (its cells, the race's script)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def mount(entry: Path, expected: dict, acc, base: Path, monkeypatch):
    """The course, its hand-ins, the plant and the sweep; returns (cfg, sweep, graded bytes, the sweep's
    CPU seconds)."""
    path = staff_class.write_config(base, extra=CELLS, roster=CLASS)
    if expected.get("due"):  # a due date the hand-ins below come after
        path.write_text(path.read_text().replace(f"due = {staff_class.DUE.isoformat()}", f"due = {expected['due']}"))
    cfg = config.load(path)
    dropbox.setup_dirs(cfg)
    bob_first = expected.get("bob", "hands in") == "hands in"
    solutions = expected.get("similar", {}).get("solutions", {})
    stored = {s: hand_in(cfg, base, s, solutions.get(s)) for s in CLASS if s != "bob" or bob_first}
    for s in stored:
        student_standing.token(cfg, s, create=True)
        if acc is not None:
            os.chown(folder(cfg, s) / student_standing.TOKEN_NAME, acc.uid[s], acc.gid[s])
    student_standing.write_views(cfg)
    theirs, mine = stored[VICTIM], stored[ATTACKER]
    files_json = base / "their-files.json"
    files_json.write_text(json.dumps(json.loads((theirs / "manifest.json").read_text())["files"]))
    os.chmod(files_json, 0o644)
    env = dict(os.environ, BOX=str(cfg.dropbox_dir), ME=ATTACKER, MINE=str(mine), VICTIM=VICTIM, THEIRS=str(theirs),
               MYDIR=str(mine.parent), THEIRDIR=str(theirs.parent),
               THEIR_SHA_TILED=records.sha256_file(theirs / "files" / "tiled.cu"), THEIR_FILES_JSON=str(files_json),
               MY_DIGEST=json.loads((mine / "manifest.json").read_text())["attempt_sha256"], GALLERY=str(GALLERY),
               PY=sys.executable)
    for cmd in expected.get("staff_first", []):  # a decision made before the plant, which the plant tries to undo
        r = staff(cfg, *cmd)
        assert r.returncode == 0, r.stdout + r.stderr
    who = expected.get("plant_as", ATTACKER)
    r = subprocess.run([*as_user(acc, who), "sh", str(entry / "plant.sh")], env=env, cwd=base, capture_output=True,
                       text=True, timeout=TIME_LIMIT)
    if r.returncode == 77:
        pytest.skip(f"{entry.name}: the attack cannot be made on this machine: {r.stderr.strip()}")
    assert r.returncode == 0, f"plant.sh failed:\n{r.stdout}{r.stderr}"
    if expected.get("bob") == "refused after the plant":
        with pytest.raises(dropbox.SubmissionError, match="is not owned by bob"):
            hand_in(cfg, base, "bob")
    for want in expected.get("mallory_commands", []):  # her own commands, with her own rights
        r = tool(cfg.path, *want["args"], user=ATTACKER if acc is not None else None, timeout=TIME_LIMIT)
        assert "Traceback" not in r.stderr and r.returncode == want["exit"], r.stdout + r.stderr
        for words in want.get("says", []):
            assert words in r.stdout + r.stderr, (want["args"], words, r.stdout + r.stderr)
    fired = race(monkeypatch, expected["race"], entry, env, acc) if expected.get("race") else None

    graded = {}

    def stand_in_grader(gcfg, files, out, meta, say=print):  # what the GPU grader would be given, kept
        graded.setdefault(meta["student"], []).append(dict(files))
        (out / "results.json").write_text(json.dumps({"score": {"total": 10.0, "max": 100, "stages": []}, "results": []}))
        return grading.finish_outcome(out, dict(meta, schema=grading.OUTCOME_SCHEMA, status="graded", node="gallery",
                                         score={"total": 10.0, "max": 100}, message="graded: 10 / 100 (stand-in)"))
    monkeypatch.setattr(grading, "grade_into", stand_in_grader)
    for var in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(var, raising=False)
    if expected.get("root_submits"):  # with the stand-in grader: a local grading of it grades nothing
        root_submits(cfg, base, expected["root_submits"])
    sweep = cfg.sweeps_dir / "final"
    started = cpu_seconds()
    if expected.get("staff_memory_mb"):
        tracemalloc.start()
    with time_limit(TIME_LIMIT, "the sweep"):
        entries = sweep_commands.plan_sweep(cfg, when=staff_class.PLANNED)
        sweep.mkdir(parents=True)
        records.write_json_atomic(sweep / "plan.json", sweep_commands.plan_record(cfg, "final", entries))
        todo = sweep_work.sweep_todo(sweep, entries).todo
        run = sweep / "runs" / "run-001"
        (run / "logs").mkdir(parents=True)
        records.write_json_atomic(run / "tasks.json", todo)
        for i in range(len(todo)):
            sweep_commands.run_task(cfg, sweep, run.name, i)
    assert fired is None or fired, "the race's script never ran: the door did not open the file"
    if expected.get("staff_memory_mb"):
        held = tracemalloc.get_traced_memory()[1] / (1 << 20)
        tracemalloc.stop()
        assert held <= expected["staff_memory_mb"], f"the sweep's process held {held:.0f} MiB at once"
    return cfg, sweep, graded, cpu_seconds() - started


@pytest.fixture(scope="module")
def honest_sweep_cpu_seconds(accounts):
    """The CPU time the sweep of the gallery's class costs when nobody attacks (the same mount, no plant)."""
    acc, _ = accounts
    base = Path(tempfile.mkdtemp(prefix="gemmlab-dropbox-gallery-", dir="/tmp"))
    os.chmod(base, 0o755)  # the students reach the drop box, and the plant, through it
    entry = base / "no-attack"
    entry.mkdir(mode=0o755)
    (entry / "plant.sh").write_text("exit 0\n")
    os.chmod(entry / "plant.sh", 0o644)
    try:
        with pytest.MonkeyPatch.context() as mp:
            return mount(entry, {}, acc, base, mp)[3]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def outside(base: Path, mine: Path) -> dict:
    """Every path below base but those in mine, with its owner, group and mode (no link followed)."""
    seen = {}
    for d, dirs, files in os.walk(base):
        dirs[:] = [n for n in dirs if Path(d, n) != mine]
        for name in dirs + files:
            st = os.lstat(Path(d, name))
            seen[str(Path(d, name).relative_to(base))] = (st.st_uid, st.st_gid, st.st_mode)
    return seen


def root_submits(cfg, base: Path, says: list[str]):
    """Root hands in for mallory (`submit --user mallory`) after her plant: nothing outside her own
    directory is created, removed, or changes owner or mode; what the command prints holds `says`."""
    src = base / "src" / "for-mallory"
    src.mkdir(parents=True)
    for name in staff_class.STAGE_FILES:
        (src / name).write_bytes((staff_class.ROOT / "student" / name).read_bytes() + marker(ATTACKER) + b"// again\n")
    before = outside(base, folder(cfg, ATTACKER))
    said = io.StringIO()
    with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said), time_limit(TIME_LIMIT, "root's submit"):
        gemmlab_cluster.main(["--config", str(cfg.path), "submit", "--student-dir", str(src), "--user", ATTACKER,
                              "--no-compile-check"])
    assert outside(base, folder(cfg, ATTACKER)) == before, said.getvalue()
    for words in says:
        assert words in said.getvalue(), (words, said.getvalue())


def race(monkeypatch, spec: dict, entry: Path, env: dict, acc):
    """Run spec's script (as the attacker) the instant after the door first opens the attacker's
    files/<spec file> in the staff's own process (a cell may start no process): the worst timing a
    student could hit."""
    real_open, fired, staff_process = os.open, [], os.getpid()

    def open_then_swap(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        if not fired and os.getpid() == staff_process and path == spec["file"] and dir_fd is not None \
                and flags == attempts.FILE_FLAGS:
            where = os.readlink(f"/proc/self/fd/{dir_fd}")
            if where.startswith(str(Path(env["BOX"]) / ATTACKER)):
                fired.append(where)
                subprocess.run([*as_user(acc, ATTACKER), "sh", str(entry / spec["script"])], env=env, check=True)
        return fd
    monkeypatch.setattr(attempts.os, "open", open_then_swap)
    return fired


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda p: p.name)
def test_the_drop_box_gallery(entry, accounts, honest_sweep_cpu_seconds, monkeypatch):
    expected = json.loads((entry / "expected.json").read_text())
    acc, why = accounts
    if expected.get("needs_accounts") and acc is None:
        pytest.skip(f"{entry.name} needs students with Unix accounts of their own (a private mount namespace): {why}")
    base = Path(tempfile.mkdtemp(prefix="gemmlab-dropbox-gallery-", dir="/tmp"))
    os.chmod(base, 0o755)  # the students reach the drop box through it
    try:
        cfg, sweep, graded, seconds = mount(entry, expected, acc, base, monkeypatch)
        bound = honest_sweep_cpu_seconds + ATTACKER_CELLS * CELL_CPU_SECONDS
        print(f"{entry.name}: the sweep cost {seconds:.1f} CPU s (the honest class's: {honest_sweep_cpu_seconds:.1f} s)")
        assert seconds <= bound, f"the sweep cost {seconds:.1f} CPU s, more than the honest class's " \
                                 f"{honest_sweep_cpu_seconds:.1f} s and the attacker's {ATTACKER_CELLS} cells' CPU limits"
        monkeypatch.undo()  # the staff's commands below run as they are
        decided = {}  # what each of the staff's commands printed (no_raw_controls reads it too)
        for cmd in expected.get("staff_commands", []):
            r = staff(cfg, *cmd)
            assert r.returncode == 0, r.stdout + r.stderr
            decided[" ".join(cmd)] = r.stdout + r.stderr
        if expected.get("similar"):
            r = staff(cfg, "similarity", "--name", "final")
            assert r.returncode == 0, r.stdout + r.stderr
            with open(sweep / "similarity" / "groups.csv") as f:
                groups = [[g["stage"], g["members"]] for g in csv.DictReader(f)]
            for want in expected["similar"]["groups"]:
                assert want in groups, (want, groups)
        r = staff(cfg, "gradebook", "--name", "final")
        assert r.returncode == 0, r.stdout + r.stderr
        rows = {row["student"]: row for row in read_gradebook(sweep)}
        with open(sweep / "export" / "grades.csv") as f:
            exported = {row["student"] for row in csv.DictReader(f)}
        assert set(rows) == set(CLASS) == exported, (sorted(rows), sorted(exported))
        for student, want in expected.get("students", {}).items():
            row = rows[student]
            assert row["status"] == want["status"], (student, row["status"], row["message"])
            for words in want.get("message", []):
                assert words in row["message"], (student, words, row["message"])
        for student, other in expected.get("never_graded_as", {}).items():
            for files in graded.get(student, []):
                assert not any(marker(other) in data for data in files.values()), f"{other}'s code graded as {student}'s"
        for student, want in expected.get("record_of", {}).items():
            a = next(a for a in attempts.of_student(cfg, student) if a.number == want["attempt"])
            outcome = json.loads((gradebook.grade_dir(sweep, student, a.digest) / "outcome.json").read_text())
            assert (outcome["attempt"], outcome["status"]) == (a.path.name, want["status"]), outcome
        summary = (sweep / "summary.md").read_text()
        for words in expected.get("summary", []):
            assert words in summary, (words, summary)
        for name in expected.get("not_in_export", []):
            assert name not in rows and name not in exported
        for student in sorted(set(expected.get("status", {})) | {ATTACKER}):
            r = staff(cfg, "status", "--user", student)
            assert r.returncode == 0, r.stdout + r.stderr
            for words in expected.get("status", {}).get(student, []):
                assert words in r.stdout + r.stderr, (student, words, r.stdout + r.stderr)
        if acc is not None:  # and the student's own `make status`, with the student's rights
            r = tool(cfg.path, "status", user=ATTACKER, timeout=TIME_LIMIT)
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr
        if expected.get("no_raw_controls"):  # the bytes as a terminal gets them (text mode would turn CR into LF)
            texts = dict(decided)
            for cmd in STAFF_VIEWS:
                r = subprocess.run([PYTHON, str(TOOL), "--config", str(cfg.path), *cmd], capture_output=True,
                                   cwd=staff_class.ROOT, timeout=TIME_LIMIT)
                texts[" ".join(cmd)] = (r.stdout + r.stderr).decode(errors="replace")
            for f in ("summary.md", "gradebook.csv", "export/grades.csv"):
                texts[f] = (sweep / f).read_bytes().decode(errors="replace")
            for what, text in texts.items():
                assert not RAW_CONTROLS.search(text), f"{what} shows raw control characters:\n{text!r}"
        for student, whose in expected.get("views", {}).items():
            view = student_standing.read_view(cfg, student)
            assert (view or {}).get("student") == whose, (student, view)
    finally:
        shutil.rmtree(base, ignore_errors=True)
