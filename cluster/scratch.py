"""scratch.py — the scratch directory a grading builds a hand-in in, and how a grading stops.

A grading (a submit job, a sweep task, a local grading) copies the student's stage files into
node-local scratch ([cluster] scratch, default $TMPDIR or /tmp) and builds them there: ~11 MB of
sources and objects. Its name says whose it is and which process it belongs to:

    gemmlab-<uid>-<host>-<pid>-<random>

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
import time
from pathlib import Path

PREFIX = "gemmlab"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def host() -> str:
    """This machine's name as scratch names carry it (a name with '/' in it is not a host name)."""
    return socket.gethostname().replace("/", "_")


def _mine(uid=None) -> str:
    return f"{PREFIX}-{os.getuid() if uid is None else uid}-{host()}-"


def new(base: Path) -> Path:
    """A fresh scratch directory of this process under base (made, with its parents)."""
    d = Path(base) / f"{_mine()}{os.getpid()}-{secrets.token_hex(4)}"
    d.mkdir(parents=True)
    return d


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
