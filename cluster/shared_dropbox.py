"""shared_dropbox.py — whether hand-ins can reach the course staff: a drop box they can read.

A hand-in counts only where the staff find it. `[cluster] dropbox` is a *shared location* when all
three hold:

  1. it is an absolute path — a relative one is relative to course.toml, so in a handout it names a
     folder inside each student's own checkout, whoever unpacked it;
  2. it lies outside the checkout the tools run from;
  3. the course staff set it up: `gemmlab_cluster.py setup` (or `publish`) published the
     course's state in it (<dropbox>/.course/current, the drop box owner's: course_state.current_in).

`make submit` in a handout stores a hand-in only in a shared location, and otherwise says what the
course must set (refusal). `make handout` refuses a drop box that fails 1 or 2 — every student's
`make submit` would refuse — and warns loudly about 3, which the staff do on the cluster, maybe after
building the handout (grader/scripts/handout.py). The instructor repository is not held to it: the
staff try the tools there with a drop box of their own.
"""
import os
from pathlib import Path

import course_state

# The checkout these tools run from (a student's handout, or the instructor repository).
TREE = Path(__file__).resolve().parents[1]
SETUP = "python3 cluster/gemmlab_cluster.py --config <the course's course.toml> setup"


def is_handout(tree: Path = TREE) -> bool:
    """A tree without the reference sources: a student's handout (the Makefile's rule too)."""
    return not any((Path(tree) / "reference").glob("*.cu"))


def configured(raw: str, course_toml: Path) -> Path:
    """The drop box `[cluster] dropbox = raw` names, as config.py resolves it (relative to course.toml)."""
    p = Path(os.path.expanduser(raw))
    return p if p.is_absolute() else Path(course_toml).resolve().parent / p


def where_problem(raw: str, course_toml: Path, tree: Path = TREE) -> str:
    """Why `[cluster] dropbox = raw` can never be a shared location (1 and 2 above); '' when it can."""
    box = configured(raw, course_toml)
    if not Path(os.path.expanduser(raw)).is_absolute():
        return (f'[cluster] dropbox = "{raw}" is a relative path: relative to course.toml, so in a handout it names '
                f"a folder inside each student's own checkout (here {box})")
    try:
        box.resolve().relative_to(Path(tree).resolve())
    except ValueError:
        return ""
    return f'[cluster] dropbox = "{raw}" lies inside this checkout ({Path(tree).resolve()})'


def setup_problem(box: Path) -> str:
    """Why the drop box `box` is not set up by the staff (3 above); '' when it is."""
    record = Path(box) / course_state.COURSE_DIR / "current"
    if course_state.current_in(box) is not None:
        return ""
    if not Path(box).is_dir():
        return f"the drop box {box} does not exist (the course staff create it with setup)"
    if record.exists():
        return f"{record} was not written by the course staff (not owned by the drop box's owner, or writable by others)"
    return (f"the drop box {box} has no course state the course staff published (no {record}, which "
            "`setup` or `publish` writes)")


def problem(cfg, tree: Path = TREE) -> str:
    """Why cfg's drop box is not a shared location; '' when it is."""
    return (where_problem(cfg.values["dropbox"] or str(cfg.dropbox_dir), cfg.path, tree)
            or setup_problem(cfg.dropbox_dir))


def note(cfg, tree: Path = TREE) -> str:
    """One line for `make status` in a handout whose drop box is not a shared location ('' otherwise)."""
    if not is_handout(tree):
        return ""
    why = problem(cfg, tree)
    return (f"this course has no drop box the course staff can read ({why}): `make submit` hands nothing in "
            "until they set one up; tell them") if why else ""


def refusal(cfg, tree: Path = TREE) -> str:
    """What `make submit` in a handout says, storing nothing, when the drop box is not a shared
    location ('' when it is, or when this tree is not a handout)."""
    if not is_handout(tree):
        return ""
    why = problem(cfg, tree)
    if not why:
        return ""
    return (f"nothing was handed in: this course has no drop box the course staff can read, so a hand-in stored "
            f"here would never reach them.\n  Why: {cfg.path}: {why}.\n"
            "  This is the course's setting, not yours to change: tell the course staff. They set [cluster] dropbox "
            "to an absolute path on the cluster's shared file system, run\n"
            f"      {SETUP}\n"
            "  once, and hand out that course.toml (until then: make submit CONFIG=<their course.toml>).")
