"""scratch.py — the scratch directory a grading builds a hand-in in, and how a grading stops.

A grading (a submit job, a sweep task, a local grading) copies the student's stage files into
node-local scratch ([cluster] scratch, default $TMPDIR or /tmp) and builds them there: ~11 MB of
sources and objects. Its name says whose it is and which process it belongs to:

    gemmlab-<uid>-<host>-<pid>-<random>

It holds a student's code (and, while it builds, the grader that will run it), so it is private by
construction, whatever the umask of the command that makes it and whatever group the account's
processes share with others (on many sites every student's, sometimes the staff's too):

  * new() makes it with mode 0700, set on the directory itself (never left to the umask);
  * under a base that checked_base() accepts: the base and every directory above it belong to this
    account or to root, and one that other accounts may write is sticky, as /tmp is (nobody moves or
    removes another's entry there). Any other base is refused (UnsafeScratch), naming the directory
    and what to do: another account could otherwise read the scratch, or move it away and put a
    directory of their own in its place.

temporary() makes the other private directories a command needs for a moment (the compile check of
`make submit`, a job script before sbatch copies it) the same way, under $TMPDIR or /tmp.

Two things keep scratch from piling up on the nodes:

  * stop_cleanly(): SIGTERM (what `scancel` and Slurm's time limit send first, KillWait seconds
    before SIGKILL), SIGINT and SIGHUP raise Stopped in the grading, so every `finally` and
    `except BaseException` on the way out runs: the scratch, the unfinished results and the
    temporary directories go, and the process exits with 128 + the signal's number. One signal is
    enough: the rest are ignored while it cleans up. uninterrupted() holds a signal back while a
    result is renamed into place, so a finished result is never half-published.
  * reap(): SIGKILL and a lost node cannot be caught, so each grading, before it makes its own
    scratch, removes the scratch directories of the same user on the same host whose process is
    gone. Never another user's (neither by the name nor by the owner), never another host's (scratch
    may be shared), never one whose process still runs.
"""
import contextlib
import os
import secrets
import shutil
import signal
import socket
import stat
import tempfile
import time
from pathlib import Path

PREFIX = "gemmlab"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def host() -> str:
    """This machine's name as scratch names carry it (a name with '/' in it is not a host name)."""
    return socket.gethostname().replace("/", "_")


def _mine(uid=None) -> str:
    return f"{PREFIX}-{os.getuid() if uid is None else uid}-{host()}-"


# What chooses the directory scratch is made in: named in a refusal, for the person who can change it.
SCRATCH_SETTING = "[cluster] scratch in course.toml (empty: $TMPDIR, else /tmp)"
TEMP_SETTING = "TMPDIR (empty: /tmp)"


class UnsafeScratch(Exception):
    """A directory that another account could reach into was to hold a private directory; the
    message names it and what to do."""


def checked_base(base: Path, setting: str = SCRATCH_SETTING) -> Path:
    """base, its links resolved (made, mode 0700, where it is missing), once no other account can
    reach what is made in it: it and every directory above it belong to this account or to root, and
    one that other accounts may write is sticky. UnsafeScratch names the first that is not."""
    real = Path(os.path.realpath(base))
    missing, d = [], real
    while not os.path.lexists(d):
        missing.append(d)
        d = d.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # made meanwhile: checked below like the rest
    me = os.geteuid()
    for d in [real, *real.parents]:
        st = os.lstat(d)
        if not stat.S_ISDIR(st.st_mode):
            raise UnsafeScratch(f"{d} is not a directory (it was to hold private scratch): set {setting} to a "
                                "directory of this account's own, or one like /tmp")
        if st.st_uid not in (me, 0):
            raise UnsafeScratch(f"{d} belongs to another account (uid {st.st_uid}), which could read or replace the "
                                "private scratch made below it, so none is made there: set "
                                f"{setting} to a directory of this account's own, or one like /tmp (root's, sticky)")
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            raise UnsafeScratch(f"{d} may be written by other accounts and is not sticky: any of them could move the "
                                "private scratch made below it away and put a directory of their own in its place, so "
                                f"none is made there. Its owner makes it sticky (`chmod +t {d}`, as /tmp is) or closes "
                                f"it (`chmod go-w {d}`); or set {setting} to a directory of this account's own")
    return real


def _made_private(d: Path) -> Path:
    """The new directory d, mode 0700: made so (the umask can only take bits away) and set so on its
    own descriptor (whatever the umask took)."""
    os.mkdir(d, 0o700)
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
    return d


def new(base: Path) -> Path:
    """A fresh scratch directory of this process under base (checked_base), mode 0700."""
    return _made_private(checked_base(base) / f"{_mine()}{os.getpid()}-{secrets.token_hex(4)}")


@contextlib.contextmanager
def temporary(prefix: str, base: Path | None = None):
    """A private temporary directory (mode 0700) under base (default: $TMPDIR, else /tmp; checked_base),
    removed afterwards: with temporary("gemmlab-x-") as d: ..."""
    d = _made_private(checked_base(base or tempfile.gettempdir(), TEMP_SETTING) / f"{prefix}{secrets.token_hex(6)}")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists here (another user's counts: it is not ours to judge)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def reap(base: Path) -> list[Path]:
    """Remove this user's scratch directories on this host under base whose process is gone;
    returns them. Anything else under base is left as it is."""
    base, mine, uid = Path(base), _mine(), os.getuid()
    if not base.is_dir():
        return []
    removed = []
    for d in base.iterdir():
        if not d.name.startswith(mine):
            continue
        pid, _, token = d.name[len(mine):].partition("-")
        if not pid.isdigit() or not token or "-" in token:
            continue
        try:
            st = d.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or process_alive(int(pid)):
            continue
        shutil.rmtree(d, ignore_errors=True)
        if not d.exists():
            removed.append(d)
    return removed


def remove(d: Path, patience: float = 10.0, quiet: float = 0.2) -> bool:
    """Remove a grading's scratch d; returns whether it is gone. A stopped grading removes its scratch
    while the build's own processes (make, the compilers: signalled with it, as Slurm signals every
    process of a job) may still be writing into it on their way out; what they write after a pass is
    removed by the next, until d has stayed gone for `quiet` seconds, for up to `patience` seconds.
    What is still left then, reap() removes once their processes are gone."""
    deadline = time.monotonic() + patience
    while True:
        shutil.rmtree(d, ignore_errors=True)
        if not os.path.lexists(d):
            time.sleep(quiet)
            if not os.path.lexists(d):
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


class Stopped(BaseException):
    """The grading was told to stop (SIGTERM: scancel or a time limit; SIGINT; SIGHUP). A
    BaseException, like KeyboardInterrupt: only clean-up code catches it, and re-raises it."""

    def __init__(self, signum):
        self.signum = signum
        super().__init__(f"stopped by {signal.Signals(signum).name}")


_held = 0        # > 0 inside uninterrupted()
_pending = None  # a signal that came while held


def _on_signal(signum, frame):
    global _pending
    for s in STOP_SIGNALS:  # one stop: the clean-up that follows is not interrupted again
        signal.signal(s, signal.SIG_IGN)
    if _held:
        _pending = signum
        return
    raise Stopped(signum)


@contextlib.contextmanager
def stop_cleanly():
    """Within it, SIGTERM, SIGINT and SIGHUP raise Stopped (main thread only; elsewhere a no-op)."""
    try:
        old = {s: signal.signal(s, _on_signal) for s in STOP_SIGNALS}
    except ValueError:  # not the main thread: signals are not ours to handle here
        yield
        return
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def uninterrupted():
    """Holds a stop back until the block is done (a rename into place), then raises it."""
    global _held, _pending
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending is not None:
            signum, _pending = _pending, None
            raise Stopped(signum)
