"""dropbox.py — the drop box's writing side: collecting a hand-in, storing it as a new attempt,
a student's withdrawal mark, and choosing the attempt that counts under the deadline policy.
Everything that READS the drop box goes through attempts.py, its one door (links, owners, types,
schemas).

Layout (docs/instructor-setup.md explains it, docs/security.md, "Who reads what", the permissions):

    <dropbox>/                        owner: staff, group: staff_group, mode 3773 (setgid, sticky,
                                      students may create their own folder but not list others)
    <dropbox>/<user>+<token>/         the student's folder: owner the student, group staff_group
                                      (inherited), mode 2750. <token>: 32 random hex digits, kept in
                                      the student's home (attempts.home_token), so that a classmate
                                      who tests names learns nothing of who handed in, or when
    <folder>/.numbers/NNNN            the attempt numbers taken (_reserve_number)
    <folder>/attempt-0003-20261204T235501Z/
        manifest.json                 who, when (drop-box file system clock), sha256 of every file
        files/<stage>.cu ...          the whitelisted stage files only
        files/report.pdf              when handed in
        (manifest.json `report`: whether the report was made from measurements of these very stage
        files: attempt_records.report_check; the sweep checks the stored files again for the gradebook)
        grading/                      the feedback grading of this attempt (written by its job)

An attempt is written into a hidden temporary directory and renamed into place in one step, so a
reader never sees half of one; its number is taken first (<folder>/.numbers/NNNN, made with O_EXCL), so
it is never reused, however many hand-ins arrive at once: nothing is overwritten.
"""
import datetime as dt
import hashlib
import json
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
from pathlib import Path

# What an attempt is named and holds (attempt_records.py): the writing side takes the door's names.
from attempt_records import (ATTEMPT_RE, ENTERED_RE, FILE_NAME_RE, MANIFEST_SCHEMA, MAX_NUMBER, REPORT_NAME,
                             WITHDRAWN_NAME, attempt_digest)
import attempts as door  # the drop box's door: its way of opening a directory without following a link
from records import iso, utc_stamp

# Source files that, left out of a hand-in, would change what compiles: refuse rather than drop.
SOURCE_SUFFIXES = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".c")


class SubmissionError(Exception):
    """The hand-in cannot be accepted; the message lists every problem and what to do."""


def stage_files(grader_dir: Path) -> list[str]:
    """The whitelist: the stage files of the trusted tree's student/ (one per registry stage)."""
    names = sorted(p.name for p in (grader_dir / "student").glob("*.cu"))
    if not names:
        raise SubmissionError(f"{grader_dir}/student has no stage files (*.cu): is [cluster] grader_root right?")
    return names


def collect(cfg, student_dir: Path, report: Path | None) -> dict[str, Path]:
    """name -> path of every file to hand in; raises SubmissionError naming each problem."""
    student_dir = Path(student_dir)
    if not student_dir.is_dir():
        raise SubmissionError(f"{student_dir}: no such directory (make submit SUBMISSION=<dir like student/>)")
    wanted = stage_files(cfg.grader_dir)
    problems, files = [], {}
    limit = cfg.max_source_kb * 1024
    for name in wanted:
        p = student_dir / name
        if not p.is_file():
            problems.append(f"missing {p}: every stage file must be handed in (copy the stub back "
                            f"from the handout if you did not start that stage)")
        elif p.stat().st_size > limit:
            problems.append(f"{p} is {p.stat().st_size // 1024} KiB, more than the {cfg.max_source_kb} KiB "
                            "allowed ([cluster] max_source_kb)")
        else:
            files[name] = p
    extra = sorted(p.name for p in student_dir.iterdir()
                   if p.is_file() and p.suffix in SOURCE_SUFFIXES and p.name not in wanted)
    if extra:
        problems.append(f"{student_dir} holds source files that are not stage files: {', '.join(extra)}. "
                        f"Only {', '.join(wanted)} are graded; move that code into the stage files "
                        "(or delete the extra files) and submit again")
    if report is not None and report.is_file():
        if report.stat().st_size > cfg.max_report_mb * 1024 * 1024:
            problems.append(f"{report} is larger than {cfg.max_report_mb} MiB ([cluster] max_report_mb)")
        else:
            files[REPORT_NAME] = report
    if problems:
        raise SubmissionError("the hand-in was not accepted:\n  - " + "\n  - ".join(problems))
    return files


def report_warning(check: dict, srun: str = "srun ...") -> str:
    """What `make submit` tells a student whose report is not of the stage files handed in ('' when
    it is, or when there is no report); srun: the course's line for a GPU node (config.srun_line)."""
    fix = (f"To hand in a report of these files: `make report` (on a GPU node: {srun} make report), "
           "then `make submit` again.")
    v = check["verdict"]
    if v == "mismatch":
        which = f"; the files that differ: {', '.join(check['differ'])}" if check["differ"] else ""
        return (f"the report was made from measurements of other stage files than the ones handed in: it names "
                f"{check['report_submission'] or 'a submission'} with fingerprint {check['report']}, the stage files "
                f"handed in have {check['stages']}{which}. {fix}")
    if v == "unstamped" and check.get("unreadable"):
        return (f"the report was not read: {check['unreadable']}, so nothing shows its measurements are of the "
                f"files handed in. {fix}")
    if v == "unstamped":
        return ("the report names no stage files (made before reports carried a fingerprint, or not by `make "
                f"report`), so nothing shows its measurements are of the files handed in. {fix}")
    if v == "example":
        return ("the report handed in is the EXAMPLE report (`make report-demo`: the instructor's example data, "
                f"not your measurements). {fix}")
    return ""


def git_info(path: Path):
    def git(*args):
        r = subprocess.run(["git", "-C", str(path), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    return {"commit": commit, "dirty": bool(git("status", "--porcelain", "--", "."))}


def current_user() -> str:
    """This account's name; an account with no passwd entry (some containers) is named by its uid,
    never by $USER, which anyone can set."""
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid-{os.getuid()}"


def set_umask(cfg, staff=False):
    """What this process writes. A student's hand-in: the staff group may read it, others nothing.
    The staff's own files (staff=True: the course state, the decision log, sweeps, gradebooks,
    exports, hand-ins the staff entered): the whole staff group may write them too, so any TA carries
    on where another stopped (the directories are setgid: the group is inherited). With no staff
    group, the owner alone."""
    if not cfg.staff_group:
        return os.umask(0o077)
    return os.umask(0o007 if staff else 0o027)


def ensure_dropbox(cfg) -> Path:
    box = cfg.dropbox_dir
    if box.is_dir():
        return box
    if cfg.staff_group:
        raise SubmissionError(f"the drop box {box} does not exist. Course staff create it once with:\n"
                              f"  python3 cluster/gemmlab_cluster.py --config {cfg.path} setup")
    box.mkdir(parents=True, mode=0o700)
    return box


def setup_dirs(cfg):
    """(staff) Create the drop box and the sweeps directory with the modes described above."""
    gid = cfg.staff_gid
    # Drop box: students create their own directory (w+x) but cannot list the others (no r);
    # sticky: nobody removes another's; setgid: every directory below gets the staff group.
    modes = {cfg.dropbox_dir: 0o3773 if gid is not None else 0o1733,
             cfg.sweeps_dir: 0o2770 if gid is not None else 0o700}
    for d, mode in modes.items():
        d.mkdir(parents=True, exist_ok=True)
        if gid is not None:
            os.chown(d, -1, gid)
        os.chmod(d, mode)
    return cfg.dropbox_dir, cfg.sweeps_dir


# Root (`submit --user`) writes into a student's directory, which the student may change at any moment
# (a link planted in place of .numbers, of the hand-in being stored, of the directory itself). So the
# writing side never follows a path below the drop box: every directory is opened from the drop box
# down with attempts.open_dir (O_NOFOLLOW | O_DIRECTORY), every file is made with O_EXCL | O_NOFOLLOW
# relative to its directory's descriptor, given to the student with fchown on its own descriptor, and
# the hand-in is renamed into place relative to the student's directory's descriptor.
NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def open_user_dir(cfg, user: str, create: bool) -> int:
    """The student's folder in the drop box (<login>+<token>: attempts.folder_of) as a descriptor, opened
    without following a link; made where create and they have none (given to the student where root
    makes it). FileNotFoundError where there is none and not create; SubmissionError where it is not the
    student's own directory."""
    if not FILE_NAME_RE.match(user) or not door.USER_RE.match(user):
        raise SubmissionError(f"{user[:40]!r} is not a user name")
    box = ensure_dropbox(cfg) if create else cfg.dropbox_dir
    try:
        name = door.folder_of(box, user)
    except door.Case as e:
        raise SubmissionError(f"{e}: nothing was handed in; ask course staff to look at it") from None
    made = False
    if name is None:
        if not create:
            raise FileNotFoundError(2, "no folder in the drop box", f"{box}/{user}+...")
        name, made = _new_folder(cfg, box, user), True
    where = box / name
    root = door.open_root(box)
    try:
        try:
            d = door.open_dir(root, name, str(where))
        except door.Case as e:
            raise SubmissionError(f"{e}: nothing was handed in; ask course staff to look at it") from None
    finally:
        os.close(root)
    try:
        owner = _owner(cfg, user)
        if made and owner is not None and os.getuid() == 0:
            os.fchown(d, *owner)
        st = os.fstat(d)
        if owner is not None and st.st_uid != owner[0]:
            raise SubmissionError(f"{where} is not owned by {user}: ask course staff to look at it "
                                  "(someone else may have created it)")
        if cfg.staff_group and st.st_gid != cfg.staff_gid:
            raise SubmissionError(f"{where} does not belong to the staff group {cfg.staff_group}, so staff could "
                                  "not read your hand-in: ask course staff to run `gemmlab_cluster.py setup`")
    except BaseException:
        os.close(d)
        raise
    return d


def _new_folder(cfg, box: Path, user: str) -> str:
    """Make the student's folder, <login>+<32 random hex digits>, and return its name. The name is kept
    first in the student's own home (attempts.home_token), written with the student's own rights (root,
    handing in for them, writes it from a child that became the student), so that the student's commands
    find the folder again and nobody else can."""
    token = secrets.token_hex(16)
    name = f"{user}+{token}"
    uid = door.account_uid(user)
    if uid is not None:
        _keep_home_token(box, user, uid, token)
    try:
        os.mkdir(box / name, 0o750 if cfg.staff_group else 0o700)  # group staff is inherited (setgid)
        door.forget_listing(box)
    except PermissionError:
        raise SubmissionError(f"cannot create a folder in {box}: the drop box is not writable by you; "
                              "ask course staff to run `gemmlab_cluster.py setup`") from None
    return name


def _keep_home_token(box: Path, user: str, uid: int, token: str) -> None:
    """Write the folder's token into the student's home (mode 0600, its directories 0700), as the student."""
    pw = pwd.getpwuid(uid)
    path = door.home_token(box, pw.pw_dir)

    def write():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, NEW_FILE, 0o600)
        try:
            os.write(fd, (token + "\n").encode())
        finally:
            os.close(fd)
        os.replace(tmp, path)

    if os.getuid() == uid:
        try:
            write()
        except OSError as e:
            raise SubmissionError(f"cannot keep the name of your drop-box folder in {path} ({e.strerror}): "
                                  "make your home writable, then hand in again") from None
        return
    if os.getuid() != 0:
        raise SubmissionError(f"{user} has no folder in the drop box yet, and only {user} or root can make one "
                              f"(its name is kept in their home): {user}'s first `make submit` or `make status` "
                              "makes it; to hand in for them now, enter the hand-in (`enter`)")
    pid = os.fork()
    if pid == 0:  # the child becomes the student: their home, their rights, nothing of root's
        code = 1
        try:
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(uid)
            write()
            code = 0
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SubmissionError(f"cannot keep the name of {user}'s drop-box folder in their home ({path}): nothing "
                              f"was handed in; check that {user}'s home exists and is theirs")


def user_dir(cfg, user: str, create: bool) -> Path:
    """The student's folder in the drop box (checked, and made where create: open_user_dir)."""
    try:
        os.close(open_user_dir(cfg, user, create))
    except FileNotFoundError:
        if create:
            raise
        return cfg.dropbox_dir / f"{user}+..."
    return cfg.dropbox_dir / door.folder_of(cfg.dropbox_dir, user)


def _owner(cfg, user: str) -> tuple[int, int] | None:
    """(uid, gid) that what root stores for the student is given: the student, and the staff group (or
    the student's own group where the course has none); None for a name with no local account
    (synthetic tests, an external roster: not checked, nothing given)."""
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        return None
    return pw.pw_uid, cfg.staff_gid if cfg.staff_gid is not None else pw.pw_gid


def _write_new(dir_fd: int, name: str, data: bytes, owner, mode=0o666) -> None:
    """A new file `name` in dir_fd (never one that is there, never through a link) holding data; given
    to owner (uid, gid) where not None."""
    fd = os.open(name, NEW_FILE, mode, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if owner is not None:
            os.fchown(fd, *owner)
    finally:
        os.close(fd)


def write_record(cfg, attempt: Path, name: str, record: dict) -> None:
    """Write a record beside a stored hand-in (job.json) in one rename, through descriptors from the
    drop box down: never through a link its student planted (the attempt may be anyone's: root's
    `submit --user` writes one for the student)."""
    d = open_user_dir(cfg, door.folder_student(attempt.parent.name) or attempt.parent.name, create=False)
    try:
        a = door.open_dir(d, attempt.name, str(attempt))
        try:
            tmp = f".{name}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
            _write_new(a, tmp, (json.dumps(record, indent=2) + "\n").encode(), None)
            try:
                os.rename(tmp, name, src_dir_fd=a, dst_dir_fd=a)
            except BaseException:
                os.unlink(tmp, dir_fd=a)
                raise
        finally:
            os.close(a)
    except door.Case as e:
        raise SubmissionError(f"{e}: its record {name} was not written; ask course staff to look at it") from None
    finally:
        os.close(d)


def _fs_now(dir_fd: int) -> dt.datetime:
    """The drop box's clock: the modification time the file system gives a file written now
    (on NFS, the server's clock; never the client's)."""
    probe = f".clock-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(probe, NEW_FILE, 0o600, dir_fd=dir_fd)
    try:
        return dt.datetime.fromtimestamp(os.fstat(fd).st_mtime, dt.timezone.utc)
    finally:
        os.close(fd)
        os.unlink(probe, dir_fd=dir_fd)


def store_attempt(cfg, user: str, files: dict[str, Path], git=None, submitted_at=None, extra=None,
                  entered_in: Path | None = None) -> Path:
    """Write a new attempt atomically; returns its directory. submitted_at overrides the clock
    (tests and staff-entered hand-ins only). entered_in: the staff's directory of the student's
    entered hand-ins (attempts.entered_dir), instead of the student's own."""
    old_umask = set_umask(cfg, staff=entered_in is not None)
    try:
        if entered_in is not None:  # the staff's own area: no student writes there
            entered_in.mkdir(parents=True, exist_ok=True)
            where, d, owner = entered_in, os.open(entered_in, door.DIR_FLAGS), None
        else:
            d = open_user_dir(cfg, user, create=True)
            where = cfg.dropbox_dir / (door.folder_of(cfg.dropbox_dir, user) or f"{user}+...")
            owner = _owner(cfg, user) if os.getuid() == 0 else None
        try:
            return _store_in(cfg, d, where, user, files, git, submitted_at, extra, entered_in is not None, owner)
        except door.Case as e:  # the student changed their directory while the hand-in was stored
            raise SubmissionError(f"{e}: nothing was handed in; ask course staff to look at it") from None
        finally:
            os.close(d)
    finally:
        os.umask(old_umask)


def _store_in(cfg, d: int, where: Path, user, files, git, submitted_at, extra, entered: bool, owner) -> Path:
    """The hand-in written into a hidden directory in d, then renamed into place (see store_attempt)."""
    tmp = f".incoming-{os.getpid()}-{secrets.token_hex(4)}"
    os.mkdir(tmp, dir_fd=d)
    try:
        t = door.open_dir(d, tmp, str(where / tmp))
        try:
            os.mkdir("files", dir_fd=t)
            f = door.open_dir(t, "files", str(where / tmp / "files"))
            try:
                entries = {}
                for name, src in sorted(files.items()):
                    data = Path(src).read_bytes()
                    _write_new(f, name, data, owner)
                    entries[name] = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
                if owner is not None:
                    os.fchown(f, *owner)
            finally:
                os.close(f)
            stored = _fs_now(t)
            when = submitted_at or stored
            manifest = {
                "schema": MANIFEST_SCHEMA,
                "course": cfg.course,
                "user": user,
                "uid": os.getuid(),
                "submitted_at": iso(when),
                "stored_at": iso(stored),  # the drop box's clock when it was written: what a later change is measured from
                "clock": "drop-box file system" if submitted_at is None else "set by staff",
                "host": socket.gethostname(),
                "files": entries,
                "attempt_sha256": attempt_digest(entries),
                "git": git,
            }
            if extra:
                manifest.update(extra)
            _write_new(t, "manifest.json", (json.dumps(manifest, indent=2) + "\n").encode(), owner)
            if owner is not None:
                os.fchown(t, *owner)
        finally:
            os.close(t)
        number = _reserve_number(d, where, ENTERED_RE if entered else ATTEMPT_RE, owner)
        final = f"{'entered' if entered else 'attempt'}-{number:04d}-{utc_stamp(when)}"
        # Fails on an existing (never empty) attempt: nothing is overwritten. A link of that name is
        # replaced, never followed.
        os.rename(tmp, final, src_dir_fd=d, dst_dir_fd=d)
        return where / final
    except BaseException:
        shutil.rmtree(tmp, dir_fd=d, ignore_errors=True)
        raise


# Attempt numbers taken, one empty file per number (<dir>/.numbers/0034): made with O_EXCL, so a number
# goes to one hand-in only, however many arrive at the same instant (their directory names differ by
# their time stamps, so the rename alone would let two of them take the same number).
NUMBERS_DIR = ".numbers"


def _reserve_number(d: int, where: Path, name_re, owner) -> int:
    """The next attempt number in the directory d, taken for good: above every attempt there and every
    number taken before (a hand-in that failed after taking its number leaves a gap, never a reuse)."""
    try:
        os.mkdir(NUMBERS_DIR, dir_fd=d)
        made = True
    except FileExistsError:
        made = False
    try:
        numbers = door.open_dir(d, NUMBERS_DIR, str(where / NUMBERS_DIR))
    except door.Case as e:
        raise SubmissionError(f"{e}. Nothing was handed in: remove it (its student may; it is re-made at the next "
                              "hand-in), then hand in again") from None
    try:
        if made and owner is not None:
            os.fchown(numbers, *owner)
        stored = [int(m.group(1)) for m in map(name_re.match, os.listdir(d)) if m]
        taken = [int(n) for n in os.listdir(numbers) if re.fullmatch(r"[0-9]{1,9}", n)]
        first = max(stored + taken, default=0) + 1
        if first + 10_000 > MAX_NUMBER:
            raise SubmissionError(f"the next attempt number would be {first}, near the largest an attempt may have "
                                  f"({MAX_NUMBER}): an entry the store did not make holds it (an attempt-<number>-... "
                                  f"directory in {where}, or a number in {where / NUMBERS_DIR}). Nothing was handed in: "
                                  "remove that entry, then hand in again")
        for number in range(first, first + 10_000):
            try:
                _write_new(numbers, f"{number:04d}", b"", owner, mode=0o640)
            except FileExistsError:
                continue  # taken by a hand-in of the same instant: the next one
            return number
    finally:
        os.close(numbers)
    raise SubmissionError(f"could not take an attempt number in {where / NUMBERS_DIR}: ask course staff to look at it")


def withdraw(attempt, undo=False):
    """Mark (or unmark) an attempt as withdrawn by its student."""
    mark = attempt.path / WITHDRAWN_NAME
    if undo:
        mark.unlink(missing_ok=True)
        return
    tmp = attempt.path / f".{WITHDRAWN_NAME}.{os.getpid()}"
    tmp.write_text(json.dumps({"withdrawn_at": iso(dt.datetime.now(dt.timezone.utc)), "by": current_user()}) + "\n")
    os.replace(tmp, mark)
