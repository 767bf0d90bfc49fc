"""attempts.py — the one way into the drop box (and into the hand-ins the staff entered, and a
student's token).

Every student writes the drop box; the staff's tools read it with the staff's rights. What lies there
is hostile input, so nothing else in cluster/ opens a path below the drop box: it asks this module,
which hands back plain values — the checked bytes of each file, the parsed manifest, times — or a
named case for a person. The rules, in one place (docs/instructor-setup.md, "The drop box and who
can read it"):

  * Every level below the drop box root (the student's own directory included) is opened with
    O_NOFOLLOW | O_DIRECTORY relative to its parent's descriptor: no symbolic link is ever followed.
  * A file is looked at (lstat) before it is opened, opened with O_NOFOLLOW | O_NONBLOCK (a FIFO or a
    device never blocks) and checked again on the open descriptor (fstat: the same file, a regular
    one, one link, no larger than its cap, owned by the directory's student), then read through that
    descriptor: a file swapped for a link after the look is never read.
  * Every attempt's files are read and hashed in the cell that lists the attempt (cell.py: within its
    limits, however many attempts a directory holds); the staff's process reads the bytes of an attempt
    only to grade or compare it (stage_bytes; `at` reads them at once), each file checked against the
    cell's hash: what it holds of a student is one attempt, never all of them.
  * Only a student with an account here is held to owning their files (pwd); for a name with no
    local account (a synthetic class) the owner is not checked. A student's directory owned by another
    account is a case of its own: nothing in it is graded.
  * Records (manifest.json, grading/outcome.json, grading/results.json, job.json, withdrawn.json,
    .token) are read through a schema: valid JSON of the right types, small, or a case.
  * What breaks a rule is a Case ("alice's attempt #3: files/tiled.cu is a symbolic link; a hand-in
    holds regular files only"): the sweep makes it needs_review, `status` prints it. Never a traceback,
    never another student's data.

Dating (effective_time) and change detection (changed_after_store) are precise, with no slack: an
attempt is as old as the latest change time (ctime) of anything in it, which nobody can set back.

What an attempt is named and holds, and the schemas its records are checked with: attempt_records.py.
"""
import datetime as dt
import errno
import hashlib
import os
import pwd
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from attempt_records import (ATTEMPT_RE, EARLIEST, ENTERED_RE, FILE_NAME_RE, MAX_FILES, RECORD_CAP, RECORDS,
                             REPORT_NAME, SHA256_RE, TOKEN_CAP, WITHDRAWN_NAME, Caps, Case, attempt_digest, caps, check_manifest, check_outcome,
                             check_withdrawn, parse_json, report_check)
import cell
from config import COURSE_DIR
from records import iso, parse_iso

# The flags every level below the drop box is opened with: no link is followed, nothing blocks.
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
# A record's ctime may lie this much after the clock reading written into it: the manifest's times are
# written with microseconds, the file system's clock has nanoseconds (rounding, never a window).
RECORD_ROUNDING = dt.timedelta(microseconds=1)


def account_uid(name: str) -> int | None:
    """The uid of a local account of that name; None for a name with no account (not checked)."""
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _ctime(st: os.stat_result) -> dt.datetime:
    """A change time at the precision the file system keeps (its nanoseconds, to the microsecond)."""
    return EPOCH + dt.timedelta(microseconds=st.st_ctime_ns // 1000)


def _kind(st: os.stat_result) -> str:
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device node"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "not a regular file"


# ---- opening, one level at a time ------------------------------------------------------------
def open_dir(parent_fd: int, name: str, where: str) -> int:
    """A directory below parent_fd, never through a link; Case names what it is instead."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent_fd)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(errno.ENOENT, "no such directory", where) from None
        if e.errno in (errno.ELOOP, errno.ENOTDIR):  # what it is instead (O_DIRECTORY meets a link: ENOTDIR)
            try:
                kind = _kind(os.stat(name, dir_fd=parent_fd, follow_symlinks=False))
            except OSError:
                kind = "not a directory"
            if kind == "a symbolic link":
                raise Case(f"{where} is a symbolic link; the drop box holds directories and regular files only") from None
            raise Case(f"{where} is {kind}, not a directory") from None
        raise Case(f"{where} cannot be opened ({e.strerror})") from None


def open_root(path: Path, listing=False) -> int:
    """The drop box root (or the staff's directory of entered hand-ins) as the staff configured it;
    everything below is opened from it with open_dir. Only to pass through (O_PATH: a student may
    pass through the drop box but not list it), unless listing."""
    try:
        return os.open(str(path), (os.O_RDONLY if listing else os.O_PATH) | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(errno.ENOENT, "no such directory", str(path)) from None
        raise


def read_file(dir_fd: int, name: str, cap: int, owners: set | None, where: str) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file below dir_fd, read through the descriptor that was checked.
    owners: the uids that may own it (None: not checked). FileNotFoundError when it is not there."""
    try:
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise Case(f"{where} cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(before.st_mode):
        raise Case(f"{where} is {_kind(before)}; a hand-in holds regular files only")
    _check_file(before, cap, owners, where)
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise Case(f"{where} is a symbolic link; a hand-in holds regular files only") from None
        if e.errno == errno.ENOENT:
            raise
        raise Case(f"{where} cannot be read ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise Case(f"{where} was replaced while it was read; a hand-in holds regular files only")
        _check_file(st, cap, owners, where)
        chunks, left = [], cap + 1
        while left > 0:
            block = os.read(fd, min(left, 1 << 20))
            if not block:
                break
            chunks.append(block)
            left -= len(block)
        data = b"".join(chunks)
        if len(data) > cap:
            raise Case(f"{where} grew past {cap} bytes while it was read")
        return data, st
    finally:
        os.close(fd)


def _check_file(st: os.stat_result, cap: int, owners: set | None, where: str):
    if st.st_nlink == 0:
        raise Case(f"{where} was removed or replaced while it was read")
    if st.st_nlink != 1:
        raise Case(f"{where} has {st.st_nlink} hard links; a hand-in holds files of its own only (one link)")
    if st.st_size > cap:
        raise Case(f"{where} is {st.st_size} bytes, more than the {cap} allowed")
    if owners is not None and st.st_uid not in owners:
        raise Case(f"{where} belongs to another account (uid {st.st_uid}); a hand-in holds its student's own files only")


def list_names(dir_fd: int) -> list[str]:
    return sorted(os.listdir(dir_fd))



# ---- an attempt ---------------------------------------------------------------------------------
@dataclass
class Attempt:
    """One hand-in as the door read it. path: where it lies (for messages, and for what the tools
    write beside it: grading/, job.json) — never read through by the rest of the cluster.
    manifest: the checked manifest (a stand-in with the time of the directory's name where the
    attempt has a problem that keeps its manifest from being read). problem: the door's named case
    ('' when every entry is what a hand-in holds)."""
    path: Path
    number: int
    manifest: dict
    entered: bool = False          # entered by the course staff (course_state: e-mailed files), not the student
    staff_withdrawn: dict | None = None  # the staff's decision that withdraws it (course_state)
    staff_restored: dict | None = None   # the staff's decision that counts it again despite the student's mark
    owner: str = ""                # the student whose directory it lies in (never the manifest's word)
    problem: str = ""
    marked_withdrawn: bool = False
    mark_time: dt.datetime | None = None  # when the mark was made: its ctime (not its word), never before the attempt
    mark_late: bool = False        # made after the student's due date: not honoured (which_counts.attempts_of)
    changes: list = field(default_factory=list)   # (ctime, name) of the manifest, files/ and each file in it
    dir_ctime: dt.datetime | None = None
    dir_uid: int | None = None
    caps: Caps = field(default_factory=caps)
    record_problems: dict = field(default_factory=dict)
    limits: cell.Limits = field(default_factory=cell.Limits)  # of the cells that parse what lies beside it
    _hashes: dict | None = None    # name -> sha256 of each file of files/, as the cell that listed it read them
    _read: dict | None = None      # name -> (sha256, bytes or None): the staff's process's own reading (stage_bytes)
    _records: dict = field(default_factory=dict)  # name -> the checked record (or None), read in the listing's cell

    # -- as plain values: what a cell hands back (to_plain in the cell, from_plain in the staff's process) --
    def to_plain(self) -> dict:
        return {"path": str(self.path), "number": self.number, "manifest": self.manifest, "entered": self.entered,
                "owner": self.owner, "problem": self.problem, "marked_withdrawn": self.marked_withdrawn,
                "mark_time": self.mark_time.isoformat() if self.mark_time else None,
                "changes": [[t.isoformat(), n] for t, n in self.changes],
                "dir_ctime": self.dir_ctime.isoformat() if self.dir_ctime else None, "dir_uid": self.dir_uid,
                "record_problems": self.record_problems, "records": self._records, "hashes": self._hashes}

    @classmethod
    def from_plain(cls, d: dict, cap: Caps, limits: cell.Limits) -> "Attempt":
        """An attempt from a cell's answer; its manifest and times checked again here (cheap, and the
        answer's only way in)."""
        a = cls(path=Path(d["path"]), number=int(d["number"]), manifest=d["manifest"], entered=bool(d["entered"]),
                owner=str(d["owner"]), problem=str(d["problem"]), marked_withdrawn=bool(d["marked_withdrawn"]),
                mark_time=dt.datetime.fromisoformat(d["mark_time"]) if d.get("mark_time") else None,
                changes=[(dt.datetime.fromisoformat(t), str(n)) for t, n in d["changes"]],
                dir_ctime=dt.datetime.fromisoformat(d["dir_ctime"]) if d["dir_ctime"] else None,
                dir_uid=d["dir_uid"], caps=cap, record_problems=dict(d["record_problems"]), limits=limits,
                _records=dict(d["records"]), _hashes=_checked_hashes(d.get("hashes")))
        try:
            check_manifest(a.manifest, f"{a.where}: manifest.json")
        except Case as e:
            a.problem = a.problem or str(e)
            a.manifest = {"user": a.owner, "submitted_at": iso(EARLIEST), "files": {}, "attempt_sha256": ""}
        return a

    @property
    def student(self) -> str:
        return self.owner or folder_student(self.path.parent.name) or self.path.parent.name

    @property
    def label(self) -> str:
        """How people name it: #3, or E1 for the first hand-in the staff entered."""
        return f"E{self.number}" if self.entered else f"#{self.number}"

    @property
    def where(self) -> str:
        return f"{self.student}'s {'entered hand-in' if self.entered else 'attempt'} {self.label}"

    @property
    def submitted_at(self) -> dt.datetime:
        return parse_iso(self.manifest["submitted_at"])

    @property
    def withdrawn(self) -> bool:
        if self.staff_restored is not None:
            return False
        # A hand-in the staff entered lies in their area: only a decision withdraws it.
        return self.staff_withdrawn is not None or (not self.entered and self.marked_withdrawn and not self.mark_late)

    # -- the files: hashed in the cell that listed the attempt; their bytes read here only when asked --
    # A student's directory may hold any number of attempts, so what the staff's process holds of them
    # must not grow with it: the listing's cell hashes every attempt's files (within its limits), and
    # the staff's process reads the bytes of the one attempt it grades or compares (stage_bytes; the
    # report: report_bytes), each file checked against the cell's hash.
    def _files(self) -> dict:
        if self._read is None:
            if self.problem:
                self._read = {}
            else:
                try:
                    hashed = self._hashes
                    if hashed is not None:  # hashed whole by the cell: the stage files are what is read here
                        hashed = {n: h for n, h in hashed.items() if n.endswith(".cu")}
                    self._read = _read_files(self, stages_only=hashed is not None)
                    got = {n: h for n, (h, _) in self._read.items()}
                    if hashed is not None and got != hashed:
                        changed = sorted(n for n in set(got) | set(hashed) if got.get(n) != hashed.get(n))
                        raise Case(f"files/{changed[0]} changed while the attempt was read")
                except Case as e:
                    self.problem = self.problem or f"{self.where}: {e}"
                    self._read = {}
                except OSError as e:
                    self.problem = self.problem or f"{self.where}: cannot be read ({e.strerror or e})"
                    self._read = {}
        return self._read

    def file_hashes(self) -> dict[str, str]:
        """name -> sha256 of each file as read (not as the manifest says): by the cell that listed the
        attempt, else by this process."""
        if self._hashes is not None:
            return dict(self._hashes)
        return {n: h for n, (h, _) in self._files().items()}

    def stage_bytes(self) -> dict[str, bytes]:
        """name -> the checked bytes of each stage file (*.cu): what grading and similarity get."""
        return {n: b for n, (_, b) in self._files().items() if b is not None}

    def report_bytes(self) -> bytes | None:
        """The report's bytes, read here, or None (none handed in, or not the bytes that were hashed)."""
        expected = self.file_hashes().get(REPORT_NAME)
        if expected is None:
            return None
        data = _read_one(self, REPORT_NAME)
        return data if data is not None and hashlib.sha256(data).hexdigest() == expected else None

    @property
    def digest(self) -> str:
        """The digest of the files as read (attempt_digest): what grade records are filed
        under. '' when the files cannot be read (the problem says why)."""
        hashes = self.file_hashes()
        if self.problem or not hashes:
            return ""
        return attempt_digest({n: {"sha256": h} for n, h in hashes.items()})

    def report_verdict(self) -> str:
        """report_check's verdict of the stored files (the manifest's is the student's word), reached in
        a cell: a report's PDF is the student's bytes. A report that runs the cell into a limit is
        "unstamped" (it names no files that can be read back)."""
        files = dict(self.stage_bytes())
        if not files and REPORT_NAME not in self.file_hashes():
            return ""
        report = self.report_bytes()
        try:
            return cell.run(_report_verdict, files, report, limits=self.limits, what=f"reading {self.where}'s report")
        except cell.CellError:
            return "unstamped"

    @property
    def claimed_digest(self) -> str:
        return str(self.manifest.get("attempt_sha256") or "")

    def verify(self) -> str:
        """'' when the files match the manifest, else what differs (or the door's case)."""
        hashes = self.file_hashes()
        if self.problem:
            return self.problem
        listed = self.manifest.get("files", {})
        if set(hashes) != set(listed):
            return f"files {sorted(set(hashes) ^ set(listed))} differ from the manifest"
        for name, entry in sorted(listed.items()):
            if hashes[name] != entry["sha256"]:
                return f"{name} does not match its sha256 in the manifest"
        if attempt_digest(listed) != self.claimed_digest:
            return "the manifest's attempt_sha256 does not match its files"
        return ""

    # -- times --
    def effective_time(self) -> dt.datetime:
        """The later of the manifest's time and the latest change time (ctime) of anything in the
        attempt (its manifest, files/ and every file in it), at full precision and with no slack: a
        user can rewrite a manifest but cannot set a ctime back, so an attempt edited after the fact
        is as late as its last change. A hand-in the staff entered keeps the time they gave."""
        if self.entered:
            return self.submitted_at
        return max([self.submitted_at, *(t for t, _ in self.changes)])

    def changed_after_store(self) -> str:
        """'' when nothing in the attempt changed after it was stored, else what and when. The store
        writes every file of files/ before it reads the drop box's clock into the manifest (stored_at),
        then writes the manifest, then renames the attempt into place: so files/ and its files have
        no change time after stored_at, and the manifest none after the attempt directory's own
        (which the rename sets; later writes beside it, grading/ and job.json, only move it on). A
        hand-in stored as root for a student's account (`submit --user`) is changed once more by its
        chown, before the rename: its files are held to the directory's time too."""
        if self.entered or self.problem:
            return ""
        stored = parse_iso(self.manifest.get("stored_at") or self.manifest["submitted_at"])
        if self.manifest.get("clock") == "drop-box file system" and abs(stored - self.submitted_at) > dt.timedelta(seconds=1):
            return (f"has a manifest whose times disagree (handed in {self.manifest['submitted_at']}, stored "
                    f"{self.manifest.get('stored_at')}): the manifest was rewritten")
        by_root = self.manifest.get("uid") == 0 and self.dir_uid not in (None, 0)  # stored as root, then chowned
        late = []
        for t, name in self.changes:
            bound = self.dir_ctime if name == "manifest.json" or by_root else stored
            if bound is not None and t > bound + RECORD_ROUNDING:
                late.append((t, name))
        if not late:
            return ""
        hashes, listed = self.file_hashes(), self.manifest.get("files", {})
        manifest_as_stored = "manifest.json" not in {n for _, n in late}

        def what(name):  # bytes intact: the file's hash is still the one the manifest, itself unchanged, gives
            base = name.removeprefix("files/")
            if manifest_as_stored and name.startswith("files/") and base in listed and hashes.get(base) == listed[base]["sha256"]:
                return f"{name}: touched, bytes intact"
            return f"{name}: changed"
        t = max(t for t, _ in late)
        return (f"was changed on {iso(t)}, after it was stored on {iso(stored)} "
                f"({'; '.join(what(n) for _, n in sorted(late, key=lambda x: x[1]))})")

    def integrity_problem(self) -> str:
        """'' for an intact attempt; else what a person must look at (the door's case, verify,
        changed_after_store)."""
        return self.verify() or self.changed_after_store()

    # -- what the grading left beside it --
    def record(self, name: str) -> dict | None:
        """A record beside the hand-in (job.json, grading/outcome.json, grading/results.json), checked
        with its schema; None when there is none, or when it breaks the schema (record_problems[name]
        says how)."""
        if name not in self._records:
            try:
                self._records[name], problem = cell.run(self._record_here, name, limits=self.limits,
                                                        what=f"reading {self.where}: {name}")
            except cell.CellError as e:
                self._records[name], problem = None, f"{self.where}: {name}: {e.why}"
            if problem:
                self.record_problems[name] = problem
        return self._records[name]

    def _record_here(self, name: str):
        """(the checked record or None, the problem or ''), read and parsed in this process: only ever
        called inside a cell."""
        check, cap = RECORDS[name]
        try:
            data = _read_beside(self, name, cap)
        except FileNotFoundError:
            return None, ""
        except (Case, OSError) as e:
            return None, f"{self.where}: {e}"
        try:
            return check(parse_json(data, name), name), ""
        except Case as e:
            return None, f"{self.where}: {e}"

    def feedback_outcomes(self) -> list[dict]:
        """The outcome.json of the attempt's feedback grading and of each it replaced (grading.
        replaced-*), checked, read in a cell; unreadable ones left out."""
        try:
            return cell.run(self._feedback_here, limits=self.limits, what=f"reading {self.where}'s gradings")
        except cell.CellError:
            return []

    def _feedback_here(self) -> list[dict]:
        out = []
        try:
            with _Walk(self) as fd:
                names = [n for n in list_names(fd) if n == "grading" or n.startswith("grading.replaced-")]
                for n in names:
                    try:
                        sub = open_dir(fd, n, f"{self.where}: {n}")
                    except (Case, OSError):
                        continue
                    try:
                        data, _ = read_file(sub, "outcome.json", RECORD_CAP, self._record_owners(), n)
                        out.append(check_outcome(parse_json(data, n), n))
                    except (Case, OSError):
                        continue
                    finally:
                        os.close(sub)
        except (Case, OSError):
            pass
        return out

    def _record_owners(self):
        uid = account_uid(self.student)
        return None if uid is None or self.entered else {uid, 0, os.geteuid()}


class _Walk:
    """The attempt's directory as an open descriptor, walked from the root again (never through a
    link): with _Walk(attempt) as fd: ..."""

    def __init__(self, a: Attempt):
        self.a = a
        self.fds = []

    def __enter__(self) -> int:
        a = self.a
        self.fds.extend(_open_student(a.path.parent.parent, a.path.parent.name, a.entered))
        try:
            self.fds.append(open_dir(self.fds[-1], a.path.name, "its directory"))
        except BaseException:
            self.__exit__()
            raise
        return self.fds[-1]

    def __exit__(self, *exc):
        while self.fds:
            os.close(self.fds.pop())
        return False


def _content_owners(a: Attempt):
    uid = account_uid(a.student)
    return None if uid is None or a.entered else {uid}


def _report_verdict(files: dict, report: bytes | None) -> str:
    """report_check's verdict (only ever run in a cell: the report is the student's PDF)."""
    if report is not None:
        files = dict(files, **{REPORT_NAME: report})
    return report_check(files)["verdict"]


def _read_files(a: Attempt, stages_only=False) -> dict:
    """name -> (sha256, bytes of a stage file, None for the report) of files/, each checked;
    stages_only: of the stage files (*.cu) only."""
    with _Walk(a) as fd:
        return _read_files_at(fd, a, keep=True, stages_only=stages_only)


def _read_files_at(fd: int, a: Attempt, keep: bool, stages_only=False) -> dict:
    """_read_files of the attempt's directory fd; keep: the stage files' bytes too (else None)."""
    out = {}
    files = open_dir(fd, "files", f"{a.where}: files/")
    try:
        names = []
        with os.scandir(files) as entries:  # never more than one past the cap: a huge directory costs nothing
            for entry in entries:
                names.append(entry.name)
                if len(names) > MAX_FILES:
                    raise Case(f"files/ holds more than the {MAX_FILES} entries a hand-in may hold")
        names.sort()
        for name in names:
            where = f"files/{name}"
            if not FILE_NAME_RE.match(name):
                raise Case(f"{where[:60]!r} is not a file name a hand-in holds")
            if stages_only and not name.endswith(".cu"):
                continue
            data, _ = read_file(files, name, a.caps.of(name), _content_owners(a), where)
            out[name] = (hashlib.sha256(data).hexdigest(), data if keep and name.endswith(".cu") else None)
    finally:
        os.close(files)
    return out


def _checked_hashes(hashes) -> dict | None:
    """A cell's hashes of an attempt's files, checked for their shape (the answer's only way in)."""
    if hashes is None:
        return None
    if not isinstance(hashes, dict) or not all(isinstance(n, str) and FILE_NAME_RE.match(n) and isinstance(h, str)
                                               and SHA256_RE.match(h) for n, h in hashes.items()):
        raise Case("the cell that read the attempt answered hashes of another shape")
    return dict(hashes)


def _read_one(a: Attempt, name: str) -> bytes | None:
    try:
        with _Walk(a) as fd:
            files = open_dir(fd, "files", f"{a.where}: files/")
            try:
                data, _ = read_file(files, name, a.caps.of(name), _content_owners(a), f"files/{name}")
            finally:
                os.close(files)
    except (Case, OSError):
        return None
    return data


def _read_beside(a: Attempt, name: str, cap: int) -> bytes:
    with _Walk(a) as fd:
        parts = name.split("/")
        fds = []
        try:
            d = fd
            for part in parts[:-1]:
                d = open_dir(d, part, f"{part}/")
                fds.append(d)
            data, _ = read_file(d, parts[-1], cap, a._record_owners(), name)
        finally:
            for x in fds:
                os.close(x)
    return data


def _scan(parent_fd: int, parent: Path, name: str, number: int, student: str, entered: bool, cap: Caps) -> Attempt:
    """An attempt's directory looked at (not its files' bytes: those are read on first use, through
    the door again): its manifest checked, the change times of what it holds, its mark."""
    a = Attempt(path=parent / name, number=number, manifest={}, entered=entered, owner=student, caps=cap)
    stamp = (ENTERED_RE if entered else ATTEMPT_RE).match(name).group(2)
    try:
        named_time = dt.datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:  # a name the pattern takes whose digits are no date (20261399T999999Z)
        named_time = EARLIEST
        a.problem = f"{a.where}: its directory's name {name!r} holds no date; the store names attempts by their time"
    a.manifest = {"user": student, "submitted_at": iso(named_time), "files": {}, "attempt_sha256": ""}
    try:
        fd = open_dir(parent_fd, name, "its directory")
    except Case as e:
        a.problem = f"{a.where}: {e}"
        try:
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            a.changes.append((_ctime(st), name))
        except OSError:
            pass
        return a
    try:
        st = os.fstat(fd)
        a.dir_ctime, a.dir_uid = _ctime(st), st.st_uid
        owners = _content_owners(a)
        if owners is not None and st.st_uid not in owners:
            a.problem = (f"{a.where}: its directory belongs to another account (uid {st.st_uid}); a hand-in holds its "
                         "student's own files only")
            return a
        for entry in ("manifest.json", "files"):
            try:
                est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
                a.changes.append((_ctime(est), entry))
            except OSError:
                pass
        try:
            data, _ = read_file(fd, "manifest.json", RECORD_CAP, owners, "manifest.json")
            a.manifest = check_manifest(parse_json(data, "manifest.json"), "manifest.json")
        except FileNotFoundError:
            a.problem = a.problem or f"{a.where}: has no manifest.json"
        except Case as e:
            a.problem = a.problem or f"{a.where}: {e}"
        try:
            files = open_dir(fd, "files", "files/")
        except FileNotFoundError:
            a.problem = a.problem or f"{a.where}: has no files/ directory"
        except Case as e:
            a.problem = a.problem or f"{a.where}: {e}"
        else:
            try:
                for n in list_names(files):
                    try:
                        est = os.stat(n, dir_fd=files, follow_symlinks=False)
                    except OSError:
                        continue
                    a.changes.append((_ctime(est), f"files/{n}"))
            finally:
                os.close(files)
        try:
            mark, mark_st = read_file(fd, WITHDRAWN_NAME, RECORD_CAP, owners, WITHDRAWN_NAME)
            check_withdrawn(parse_json(mark, WITHDRAWN_NAME), WITHDRAWN_NAME)
            # A mark is never older than what it marks: one made early, in a directory the attempt was
            # moved into later, counts as made when the attempt came to be.
            a.marked_withdrawn, a.mark_time = True, max(_ctime(mark_st), a.effective_time())
        except FileNotFoundError:
            pass
        except Case as e:
            a.problem = a.problem or f"{a.where}: {e}"
        if not a.problem:  # its files hashed here, in the cell: never all of a student's bytes in the staff's process
            try:
                a._hashes = {n: h for n, (h, _) in _read_files_at(fd, a, keep=False).items()}
            except Case as e:
                a.problem = f"{a.where}: {e}"
            except OSError as e:
                a.problem = f"{a.where}: cannot be read ({e.strerror or e})"
    finally:
        os.close(fd)
    return a


def _list(parent_fd: int, parent: Path, student: str, entered: bool, cap: Caps) -> list[Attempt]:
    pattern = ENTERED_RE if entered else ATTEMPT_RE
    out = []
    for name in list_names(parent_fd):
        m = pattern.match(name)
        if m:
            out.append(_scan(parent_fd, parent, name, int(m.group(1)), student, entered, cap))
    return sorted(out, key=lambda a: a.number)


# ---- a student's folder: a name nobody else can guess ----------------------------------------------
# A student's directory in the drop box is <login>+<32 random hex digits> (FOLDER_RE). Students may
# create entries in the drop box but not list it, so a classmate who tries `stat <dropbox>/<name>`
# learns nothing of who handed in, or when: only the student, who keeps the name in their own home
# (home_token), and the staff and root, who list the drop box, find it. A folder named for a student but
# made by another account is the maker's case (folders_by_owner), never the named student's.
USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}\Z")
FOLDER_RE = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.\-]{0,63})\+([0-9a-f]{32})\Z")  # \Z, not $: "$" takes a trailing newline too
HOME_TOKEN_CAP = 64


def folder_student(name: str) -> str | None:
    """The login a folder's name is made for; None for a name that is no folder's."""
    m = FOLDER_RE.match(name)
    return m.group(1) if m else None


def home_token(box: Path, home: str) -> Path:
    """Where a student keeps the name of their folder in this drop box: a file of their own home
    (never in the drop box, which any student may probe by name)."""
    key = hashlib.sha256(os.path.realpath(box).encode()).hexdigest()[:16]
    return Path(home) / ".local" / "state" / "gemmlab" / f"handin-{key}"


def _read_home_token(box: Path, uid: int) -> str | None:
    """This account's own folder token for the drop box (the caller is the student): 32 hex digits, or None."""
    try:
        path = home_token(box, pwd.getpwuid(uid).pw_dir)
        fd = os.open(path, FILE_FLAGS)
    except (KeyError, OSError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_size > HOME_TOKEN_CAP:
            return None
        text = os.read(fd, HOME_TOKEN_CAP).decode("ascii", errors="replace").strip()
    finally:
        os.close(fd)
    return text if re.fullmatch(r"[0-9a-f]{32}", text) else None


_LISTED: dict = {}  # the drop box's folders as last listed: {box: (stamp, {student: [(name, uid)]})}


def _folders(box: Path) -> dict | None:
    """{student: [(folder name, owner uid)]} of every folder in the drop box, or None where this account
    may not list it (a student). Listed again only when the drop box changed: its modification time, and
    its link count and size, which a new folder changes within one tick of a coarse clock too (forget_listing
    after a folder this process made)."""
    try:
        root = open_root(box, listing=True)
    except (PermissionError, FileNotFoundError, NotADirectoryError):
        return None
    try:
        st = os.fstat(root)
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_nlink, st.st_size)
        known = _LISTED.get(str(box))
        if known and known[0] == stamp:
            return known[1]
        found: dict = {}
        with os.scandir(root) as entries:
            for entry in entries:
                who = folder_student(entry.name)
                if who is None:
                    continue
                try:
                    uid = entry.stat(follow_symlinks=False).st_uid
                except OSError:
                    continue
                found.setdefault(who, []).append((entry.name, uid))
        _LISTED[str(box)] = (stamp, found)
        return found
    except PermissionError:
        return None
    finally:
        os.close(root)


def forget_listing(box: Path) -> None:
    """The drop box changed under this process's own hand (a folder made): list it afresh next time."""
    _LISTED.pop(str(box), None)


def folder_of(box: Path, student: str) -> str | None:
    """The name of the student's folder in the drop box, or None where they have none (or this account,
    another student, may not know it). Case where the student has several (a lost home token: a person
    joins them)."""
    if not USER_RE.match(student):
        raise Case(f"{student[:40]!r} is not a user name")
    uid = account_uid(student)
    listed = _folders(box)
    if listed is None:  # a student: only their own folder, by the name in their home
        if uid is None or os.getuid() != uid:
            return None
        token = _read_home_token(box, uid)
        return f"{student}+{token}" if token else None
    theirs = sorted(name for name, owner in listed.get(student, []) if uid is None or owner == uid)
    if len(theirs) > 1:
        raise Case(f"{student} has {len(theirs)} folders in the drop box ({', '.join(theirs[:3])}"
                   f"{', ...' if len(theirs) > 3 else ''}): their commands lost the name of the first (it is kept in "
                   f"their home, {home_token(box, '~')}). Nothing of theirs is graded until a person keeps one")
    return theirs[0] if theirs else None


def planted_folders(box: Path) -> dict[str, list[str]]:
    """{maker's login or uid: [folder names]} of folders named for one student but made by another
    account: each the maker's case (a student cannot plant a folder that counts for another)."""
    listed = _folders(box) or {}
    out: dict[str, list[str]] = {}
    for student, names in listed.items():
        uid = account_uid(student)
        for name, owner in names:
            if uid is not None and owner != uid:
                try:
                    maker = pwd.getpwuid(owner).pw_name
                except KeyError:
                    maker = f"uid {owner}"
                out.setdefault(maker, []).append(name)
    return out


# ---- a student's directory ----------------------------------------------------------------------
def _open_student(box: Path, student: str, entered: bool) -> tuple[int, int]:
    """(root fd, the student's directory fd) — Case for a directory that is not the student's own.
    student: a login (its folder found: folder_of) or, in the drop box, the folder's own name.
    FileNotFoundError where the student has no folder (or this account may not know it)."""
    name = student
    if not entered:
        who = folder_student(student)
        if who is None:
            name = folder_of(box, student)
            if name is None:
                raise FileNotFoundError(errno.ENOENT, "no folder in the drop box", f"{box}/{student}+...")
        else:
            student = who
    elif not USER_RE.match(student):
        raise Case(f"{student[:40]!r} is not a user name")
    root = open_root(box)
    try:
        d = open_dir(root, name, f"the directory {box / name}")
    except BaseException:
        os.close(root)
        raise
    if not entered:
        uid, st = account_uid(student), os.fstat(d)
        if uid is not None and st.st_uid != uid:
            os.close(d)
            os.close(root)
            raise Case(f"the directory {box / name} was created by another account (uid {st.st_uid}): {student}'s "
                       "hand-ins cannot be told from a planted one")
    return root, d


def student_case(cfg, student: str) -> str:
    """'' when the student's directory in the drop box is theirs (or they have none) and they made no
    folder in another's name, else the case."""
    planted = planted_folders(cfg.dropbox_dir).get(student)
    if planted:
        return (f"{student} made {len(planted)} folder(s) in the drop box in another student's name "
                f"({', '.join(planted[:3])}): a person looks at it; nothing of {student}'s is graded until then")
    try:
        root, d = _open_student(cfg.dropbox_dir, student, False)
    except FileNotFoundError:
        return ""
    except Case as e:
        return str(e)
    os.close(d)
    os.close(root)
    return ""


def has_directory(cfg, student: str) -> bool:
    """Whether the student has a directory of their own in the drop box (not a link, not another's)."""
    try:
        root, d = _open_student(cfg.dropbox_dir, student, False)
    except (FileNotFoundError, Case):
        return False
    os.close(d)
    os.close(root)
    return True


def entered_dir(cfg, student: str) -> Path:
    """Where the hand-ins the staff entered for the student are kept: the course's private area
    beside the sweeps (course_state.private_root), never the drop box."""
    return cfg.sweeps_dir / COURSE_DIR / "entered" / student


def of_student(cfg, student: str) -> list[Attempt]:
    """The student's attempts in the drop box, by number; [] when the directory is missing or is not
    theirs (student_case names it)."""
    return _attempts_in(cfg.dropbox_dir, student, False, caps(cfg), cell.limits_of(cfg))


def entered_of(cfg, student: str) -> list[Attempt]:
    """The hand-ins the staff entered for the student (entered_dir), by number.
    PermissionError where this account cannot read the staff's area (a student)."""
    d = entered_dir(cfg, student)
    return _attempts_in(d.parent, d.name, True, caps(cfg), cell.limits_of(cfg))


def _attempts_in(parent: Path, student: str, entered: bool, cap: Caps, limits: cell.Limits | None = None) -> list[Attempt]:
    """The attempts in <parent>/<student>, read in a cell (manifests, names' times, marks and the records
    beside each attempt are the student's bytes); [] when there is no such directory, or it is not the
    student's (student_case names it). Case when the cell stops (a limit, or what it could not read)."""
    limits = limits or cell.Limits()
    try:
        plain = cell.run(_listing, parent, student, entered, cap, limits=limits,
                         what=f"reading {student[:40]!r}'s {'entered hand-ins' if entered else 'drop box directory'}")
    except cell.Raised as e:
        if e.kind == "PermissionError":  # a student: the staff's area is closed to them
            raise PermissionError(e.message) from None
        raise Case(str(e)) from None
    except cell.CellError as e:
        raise Case(str(e)) from None
    return [Attempt.from_plain(d, cap, limits) for d in plain]


LISTED_RECORDS = ("job.json", "grading/outcome.json")  # read with the listing; results.json when asked


def _listing(parent: Path, student: str, entered: bool, cap: Caps) -> list[dict]:
    """_attempts_in's work, in its cell: each attempt scanned, the small records beside it read."""
    try:
        name = student if entered or folder_student(student) else folder_of(parent, student)
        root, d = _open_student(parent, name or student, entered)
    except (FileNotFoundError, Case):
        return []
    try:
        found = _list(d, parent / name, folder_student(name) or name, entered, cap)
    finally:
        os.close(d)
        os.close(root)
    for a in found:
        for name in LISTED_RECORDS:
            a._records[name], problem = a._record_here(name)
            if problem:
                a.record_problems[name] = problem
    return [a.to_plain() for a in found]


def in_directory(d: Path, entered=False) -> list[Attempt]:
    """The attempts in a directory named by its path (its last component never a link): for the
    writing side's numbering and a student's own commands."""
    d = Path(d)
    return _attempts_in(d.parent, d.name, entered, caps())


def one(cfg, path: Path) -> Attempt:
    """The attempt at path — <dropbox>/<student>/attempt-... or <entered>/<student>/entered-... — read
    through the door; Case when it is no attempt of this course."""
    path = Path(os.path.abspath(path))
    entered = bool(ENTERED_RE.match(path.name))
    base = entered_dir(cfg, path.parent.name).parent if entered else cfg.dropbox_dir
    if path.parent.parent != Path(os.path.abspath(base)):
        raise Case(f"{path} is not an attempt in {base}/<student>/")
    return at(path, caps(cfg), cell.limits_of(cfg))


def at(path: Path, cap: Caps | None = None, limits: cell.Limits | None = None) -> Attempt:
    """The attempt at <root>/<student>/<attempt-...|entered-...>, opened from <root> down (an earlier
    term's drop box, a sweep plan's path); Case when it is not one."""
    path = Path(os.path.abspath(path))
    entered = bool(ENTERED_RE.match(path.name))
    m = (ENTERED_RE if entered else ATTEMPT_RE).match(path.name)
    if not m:
        raise Case(f"{path} is not named like an attempt (attempt-NNNN-<time>)")
    cap, limits = cap or caps(), limits or cell.Limits()
    try:
        plain = cell.run(_one, path, entered, int(m.group(1)), cap, limits=limits, what=f"reading {path}")
    except cell.CellError as e:
        raise Case(str(e)) from None
    a = Attempt.from_plain(plain, cap, limits)
    a.stage_bytes()  # one attempt, to grade or compare: its bytes read now, checked against its cell's hashes
    return a


def _one(path: Path, entered: bool, number: int, cap: Caps) -> dict:
    """at()'s work, in its cell."""
    root, d = _open_student(path.parent.parent, path.parent.name, entered)
    try:
        a = _scan(d, path.parent, path.name, number, folder_student(path.parent.name) or path.parent.name, entered, cap)
    finally:
        os.close(d)
        os.close(root)
    for name in LISTED_RECORDS:
        a._records[name], problem = a._record_here(name)
        if problem:
            a.record_problems[name] = problem
    return a.to_plain()


# ---- who is a student ------------------------------------------------------------------------
def directory_names(cfg) -> list[str]:
    """The logins with a folder of their own in the drop box (made by their own account)."""
    listed = _folders(cfg.dropbox_dir) or {}
    return sorted(who for who, names in listed.items()
                  if any(account_uid(who) in (None, owner) for _, owner in names))


def folders_in(box: Path) -> dict[str, str]:
    """{login: folder name} of a drop box the staff may list: each login's own folder (<login>+<token>),
    or, in an earlier term's drop box made before folders had tokens, the directory named for the login."""
    out = {}
    listed = _folders(box) or {}
    for who, names in listed.items():
        uid = account_uid(who)
        own = sorted(name for name, owner in names if uid in (None, owner))
        if own:
            out[who] = own[0]
    try:
        root = open_root(box, listing=True)
    except (PermissionError, FileNotFoundError, NotADirectoryError):
        return out
    try:
        for name in list_names(root):
            if USER_RE.match(name) and name not in out and not name.startswith("."):
                out[name] = name
    finally:
        os.close(root)
    return out


def students(cfg) -> list[str]:
    """The class: the roster when there is one (checked: class_files.read_roster) — only its students
    are students; without a roster, everyone with a folder in the drop box."""
    from class_files import read_roster
    if cfg.roster_path:
        return sorted(read_roster(cfg))
    return directory_names(cfg)


OFF_ROSTER_SHOWN = 50  # names of off-roster directories a plan names; the rest are counted


def off_roster(cfg) -> list[str]:
    """The drop box's entries that are no roster student's own folder (never students: the staff look):
    folders of logins the roster does not list, folders one account made in another's name (with the
    maker) and anything else but the staff's dot-entries; the first OFF_ROSTER_SHOWN by name, then "(and
    N more)". A student who makes a million entries costs one pass over the listing, never a million
    names in the plan, the sweep's output or the summary."""
    if not cfg.roster_path:
        return []
    from class_files import read_roster
    roster = set(read_roster(cfg))
    try:
        root = open_root(cfg.dropbox_dir, listing=True)
    except (FileNotFoundError, NotADirectoryError):
        return []
    shown, more = [], 0
    try:
        with os.scandir(root) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                who, label = folder_student(entry.name), entry.name
                if who is not None:
                    try:
                        owner = entry.stat(follow_symlinks=False).st_uid
                    except OSError:
                        owner = None
                    uid = account_uid(who)
                    if who in roster and uid in (None, owner):
                        continue
                    if uid is not None and owner != uid:
                        try:
                            label += f" (made by {pwd.getpwuid(owner).pw_name})"
                        except (KeyError, TypeError):
                            label += f" (made by uid {owner})"
                shown.append(label)
                if len(shown) > OFF_ROSTER_SHOWN:  # keep the first names by order, count the rest
                    shown.sort()
                    shown.pop()
                    more += 1
    finally:
        os.close(root)
    return sorted(shown) + ([f"(and {more} more)"] if more else [])


# ---- the student's token ------------------------------------------------------------------------
def read_token(cfg, student: str, name: str) -> str | None:
    """The student's token (<dropbox>/<student>/<name>): a regular file of theirs, one link, 32 hex
    digits; None otherwise (FileNotFoundError when there is none)."""
    try:
        root, d = _open_student(cfg.dropbox_dir, student, False)
    except Case:
        return None
    try:
        uid = account_uid(student)
        data, _ = read_file(d, name, TOKEN_CAP, None if uid is None else {uid}, name)
    except Case:
        return None
    finally:
        os.close(d)
        os.close(root)
    text = data.decode("ascii", errors="replace").strip()
    return text if re.fullmatch(r"[0-9a-f]{32}", text) else None
