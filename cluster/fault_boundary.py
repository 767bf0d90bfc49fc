"""fault_boundary.py — one student's trouble is one student's case.

A class-wide command of the staff (planning a sweep, the gradebook and its LMS files, sweep-status, the
similarity report, the leaderboard, the decision log) takes one step per student, and each step meets
what that student wrote: read through the door (attempts.py) and in cells (cell.py), but still able to
lead the staff's code somewhere nobody foresaw. So such a command takes each student's step through
`each()`: whatever the step raises — a case of the door, a cell's limit, a record of a shape no code
expected — becomes a `Fault` naming the student, the step and, where known, the file: that student's
case for a person, which the command reports. Every other student is done as if nothing happened.

A stop (scratch.Stopped, KeyboardInterrupt, SystemExit: not Exceptions) is nobody's case: it is never
caught here.
"""
from dataclasses import dataclass

from attempt_records import Case
from cell import CellError

WHY_CHARS = 500  # a case is read by a person: the first part of a long message says it


@dataclass(frozen=True)
class Fault:
    """A student's step that stopped: whose, which step ("their gradebook row"), and why — the
    message of what stopped it, with the file or directory it was at where that is known."""
    student: str
    step: str
    why: str

    def __str__(self) -> str:
        return f"{self.student}: {self.step} stopped ({self.why})"


def fault(student: str, step: str, e: Exception, where=None) -> Fault:
    """The Fault of `e`, raised by `student`'s `step` at `where` (a path, or None: an OSError's own file)."""
    # The door's cases and the cells' errors say whose and where themselves; anything else is named by its type.
    why = str(e) if isinstance(e, (Case, CellError)) else f"{type(e).__name__}: {e}"
    where = where or getattr(e, "filename", None)
    if where and str(where) not in why:
        why = f"{where}: {why}"
    return Fault(str(student), step, why[:WHY_CHARS])


def each(items, step, *, what: str, student=lambda item: item, where=None):
    """For each item, (item, step(item), None) — or (item, None, Fault) where the step raised.
    what: the step as the case names it ("their gradebook row"); student(item): whose it is;
    where(item): the file or directory it reads, for the case (optional)."""
    for item in items:
        try:
            value = step(item)
        except Exception as e:  # the boundary: this item's step is its student's case
            yield item, None, fault(_safely(student, item, "?"), what, e, _safely(where, item, None))
        else:
            yield item, value, None


def _safely(fn, item, otherwise):
    """fn(item) for naming a case, or `otherwise` where there is no fn or it fails too (an item of
    the wrong shape is a case all the same)."""
    if fn is None:
        return otherwise
    try:
        return fn(item)
    except Exception:
        return otherwise
