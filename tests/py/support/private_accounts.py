"""Unix accounts for the cluster tests that exist nowhere but in a private mount namespace.

The Slurm tests need real students (who cannot read each other's hand-ins) and a staff group.
Creating them with useradd/groupadd would write /etc/passwd and /etc/group of the machine — on a
login node whose accounts come from a directory service, a local account whose uid may be a real
person's. Instead, PrivateAccounts:

  * writes a private copy of /etc/passwd and /etc/group (the machine's entries, plus the test users,
    their groups and the extra groups) in a directory of its own under /tmp, with the users' homes;
  * moves the calling thread into a new mount namespace (unshare(CLONE_NEWNS), with every mount made
    private first, so nothing propagates back to the machine) and bind-mounts the copies over
    /etc/passwd and /etc/group there;
  * so the test itself and every process it starts — slurmctld, slurmd, munged, their jobs, the
    tests' `runuser -u <student>` — see the test accounts, and nothing else on the machine does;
  * on leaving, unmounts them and returns the thread to the machine's mount namespace; the files
    under /etc are never opened for writing.

The ids are the first free ones from FIRST_ID up, "free" as the machine's name service (files,
LDAP, sssd: whatever nsswitch.conf names) knows them, so no account of the machine is shadowed.
Needs CAP_SYS_ADMIN (root); ``available()`` says why not where it cannot work.
"""
import ctypes
import ctypes.util
import grp
import os
import pwd
import shutil
import tempfile
from pathlib import Path

CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
MNT_DETACH = 2
FIRST_ID = 2_146_000_000  # high in the 31-bit range: far from the ids sites hand out, below 2**31
FILES = ("/etc/passwd", "/etc/group")

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


def _call(fn, *args, what):
    if fn(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(src, target, flags):
    _call(_libc.mount, src and str(src).encode(), str(target).encode(), None, flags, None,
          what=f"mount {src or ''} {target}")


def available() -> str:
    """'' where PrivateAccounts can work here, else why not."""
    if os.geteuid() != 0:
        return "needs root (a mount namespace and bind mounts)"
    if not all(Path(f).is_file() for f in FILES):
        return f"{' or '.join(FILES)} is not a plain file here"
    return ""


def _free_ids(n: int, taken: set) -> list[int]:
    """n ids from FIRST_ID up that the name service knows neither as a user nor as a group."""
    out, i = [], FIRST_ID
    while len(out) < n:
        known = i in taken
        for lookup in (pwd.getpwuid, grp.getgrgid):
            try:
                lookup(i)
                known = True
            except KeyError:
                pass
        if not known:
            out.append(i)
        i += 1
    return out


class PrivateAccounts:
    """with PrivateAccounts({"alice": [], "ta": ["staff"]}, ["staff"]) as accounts: ... — each user
    with a group of its own name (its primary group) and the extra groups listed for it."""

    def __init__(self, users: dict[str, list[str]], groups: list[str]):
        self.users, self.groups = users, groups
        self.dir = None
        self.uid, self.gid = {}, {}
        self._orig_ns = None
        self._cwd = None
        self._mounted = []

    def home(self, user) -> Path:
        return self.dir / "home" / user

    def _write_files(self):
        names = set(self.users) | set(self.groups)
        ids = _free_ids(len(self.users) + len(self.groups), set())
        for name, uid in zip(self.users, ids):
            self.uid[name] = self.gid[name] = uid
        for name, gid in zip(self.groups, ids[len(self.users):]):
            self.gid[name] = gid
        passwd = [line for line in Path("/etc/passwd").read_text().splitlines() if line.split(":")[0] not in names]
        group = [line for line in Path("/etc/group").read_text().splitlines() if line.split(":")[0] not in names]
        for user in self.users:
            passwd.append(f"{user}:x:{self.uid[user]}:{self.gid[user]}:GEMM Lab test user:{self.home(user)}:/bin/bash")
            group.append(f"{user}:x:{self.gid[user]}:")
        for g in self.groups:
            group.append(f"{g}:x:{self.gid[g]}:" + ",".join(u for u, extra in self.users.items() if g in extra))
        (self.dir / "passwd").write_text("\n".join(passwd) + "\n")
        (self.dir / "group").write_text("\n".join(group) + "\n")
        for f in ("passwd", "group"):
            os.chmod(self.dir / f, 0o644)
        for user in self.users:
            self.home(user).mkdir(parents=True)
            os.chown(self.home(user), self.uid[user], self.gid[user])
            os.chmod(self.home(user), 0o700)

    def __enter__(self):
        why = available()
        if why:
            raise OSError(why)
        self.dir = Path(tempfile.mkdtemp(prefix="gemmlab-accounts-", dir="/tmp"))
        os.chmod(self.dir, 0o755)  # the users reach their homes through it
        try:
            self._write_files()
            self._cwd = os.getcwd()
            self._orig_ns = os.open("/proc/thread-self/ns/mnt", os.O_RDONLY)
            _call(_libc.unshare, CLONE_NEWNS, what="unshare(CLONE_NEWNS)")  # this thread only (CLONE_FS too)
            _mount(None, "/", MS_REC | MS_PRIVATE)  # before anything else: no mount here reaches the machine's
            for name in ("passwd", "group"):
                _mount(self.dir / name, f"/etc/{name}", MS_BIND)
                self._mounted.append(f"/etc/{name}")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc):
        while self._mounted:
            target = self._mounted.pop()
            _libc.umount2(target.encode(), MNT_DETACH)
        if self._orig_ns is not None:
            try:
                if hasattr(os, "setns"):
                    os.setns(self._orig_ns, CLONE_NEWNS)
                else:
                    _call(_libc.setns, self._orig_ns, CLONE_NEWNS, what="setns back to the machine's mount namespace")
            finally:
                os.close(self._orig_ns)
                self._orig_ns = None
                if self._cwd:
                    os.chdir(self._cwd)  # setns() moves the thread to the namespace's root
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def held_or_skipped(users: dict, groups: list):
    """The body of a pytest fixture: `yield from held_or_skipped(...)` holds PrivateAccounts for the
    fixture's scope, or skips its tests, saying why, where no private mount namespace can be made."""
    import pytest  # the tests' own: this module is also used outside pytest
    why = available()
    if why:
        pytest.skip(f"the test accounts need a private mount namespace: {why}")
    acc = PrivateAccounts(users, groups)
    try:
        acc.__enter__()
    except OSError as e:
        pytest.skip(f"the test accounts need a private mount namespace, which cannot be made here: {e}")
    try:
        yield acc
    finally:
        acc.__exit__(None, None, None)
