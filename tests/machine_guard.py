"""machine_guard.py — proof that the test suite leaves the machine's accounts and Slurm alone.

The tests make their Slurm clusters under /tmp (their own slurm.conf, munge key and ports) and
their students and staff group in a private mount namespace (tests/py/support/private_accounts.py):
none of them may write the machine's account files or its Slurm or munge configuration. tests/run_tests.py
takes snapshot() before the whole run and after it, and counts the comparison as one test, which
fails, naming each file, when anything there changed, appeared or went.
"""
import hashlib
import stat
from pathlib import Path

# The machine's files no test may write: its accounts, and its Slurm's and munge's configuration.
GUARDED = ("/etc/passwd", "/etc/group", "/etc/shadow", "/etc/gshadow", "/etc/slurm", "/etc/munge")


def _describe(p: Path) -> str:
    st = p.lstat()
    owner = f"{stat.filemode(st.st_mode)} {st.st_uid}:{st.st_gid}"
    if stat.S_ISREG(st.st_mode):
        try:
            return f"sha256 {hashlib.sha256(p.read_bytes()).hexdigest()} {owner}"
        except PermissionError:  # not readable by this user: its size and time of change must do
            return f"{st.st_size} bytes, changed {st.st_mtime_ns} {owner}"
    if stat.S_ISLNK(st.st_mode):
        return f"-> {p.readlink()} {owner}"
    return owner


def snapshot(paths=GUARDED) -> dict[str, str]:
    """Each guarded file (and everything under a guarded directory) -> its bytes' hash, mode and
    owner; a path that does not exist -> 'absent'."""
    out = {}
    for root in map(Path, paths):
        if not root.exists() and not root.is_symlink():
            out[str(root)] = "absent"
            continue
        found = [root]
        if root.is_dir() and not root.is_symlink():
            try:
                found += sorted(root.rglob("*"))
            except PermissionError as e:
                out[str(root)] = f"not listable: {e}"
        for p in found:
            out[str(p)] = _describe(p)
    return out


def changes(before: dict, after: dict) -> list[str]:
    """What differs between two snapshots, one line per file."""
    lines = []
    for path in sorted(set(before) | set(after)):
        was, now = before.get(path, "absent"), after.get(path, "absent")
        if was != now:
            lines.append(f"{path}: {was} -> {now}")
    return lines
