"""student_standing.py — each student's standing with the staff, from the decision log
(course_state.DecisionLog, the one writer of it): the staff's standing decisions folded per student
(the latest wins), the rubric's maximum a final score is held to, and what each student may see of
it — their dates, the decisions about their attempts and their official grade — left under their
token (<dropbox>/.course/to-student/<token>.json), which only they and the staff can name.
"""
import json
import math
import os
import secrets
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import attempts
import class_files
import course_state
from records import iso, iso_seconds, now, read_json, write_atomic

TOKEN_NAME = ".token"


def rubric_maximum(cfg) -> float:
    """The most points a student can get, extra credit included: from the published state's rubric
    (the grader's own reading of [scoring]: max_points + extra_credit_points); for a course not
    published yet, the same sum of course.toml's [scoring.stages] (each stage's correctness and
    performance points, for float and double)."""
    state = cfg.state if getattr(cfg, "state", None) is not None else course_state.current(cfg)
    rubric = state.info.get("rubric") if state is not None else None
    if rubric and "max_points" in rubric:
        return float(rubric["max_points"]) + float(rubric.get("extra_credit_points", 0))
    try:
        stages = ((tomllib.loads(cfg.path.read_text()).get("scoring") or {}).get("stages") or {})
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise course_state.StateError(f"{cfg.path}: the rubric's maximum cannot be read ({e}); publish the course first") from None
    total = 0.0
    for table in stages.values():
        for key in ("correctness_points", "performance_points"):
            v = table.get(key, 0)
            total += sum(float(v.get(p, 0)) for p in ("float", "double")) if isinstance(v, dict) else 2 * float(v)
    return total


def final_problem(value, maximum: float | None) -> str:
    """'' for a final score a person may set (a finite number from 0 to the rubric's maximum), else why not."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{value!r} is not a number"
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if value < 0:
        return f"{value:g} is below 0"
    if maximum is not None and value > maximum + 1e-9:
        return f"{value:g} is above the rubric's maximum, {maximum:g} (extra credit included)"
    return ""


@dataclass
class StudentDecisions:
    """The staff's standing decisions about one student, folded from the log (the latest wins)."""
    accepted: dict | None = None            # {attempt, files, seq, ...}: this attempt counts
    withdrawn: dict = field(default_factory=dict)  # attempt name -> the decision (staff's withdrawals)
    restored: dict = field(default_factory=dict)   # attempt name -> the decision (unwithdraw)
    override: dict | None = None            # {final, seq, why}: the final score, set by the staff
    history: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # decisions the fold cannot apply, each with why (fold)

    def visible(self) -> list[dict]:
        """What the student may see: the action, the attempt (its label and, for one the staff entered,
        when it was handed in), the value and when; never the why."""
        return [{k: e[k] for k in ("seq", "at", "action", "attempt", "label", "submitted_at", "final") if k in e}
                for e in self.history
                if e["action"] in ("accept", "withdraw", "unwithdraw", "override", "clear-override", "settle", "enter")]


def fold(entries: list[dict], maximum: float | None = None) -> dict[str, StudentDecisions]:
    """The standing decisions per student. A line that sets a final score no person may set (not a
    finite number from 0 to `maximum`: written by an older version of the tools) is not applied: it
    is kept in the student's `skipped`, with why, for the gradebook to report."""
    out: dict[str, StudentDecisions] = {}
    for e in entries:
        s = e.get("student")
        if not s:
            continue
        d = out.setdefault(s, StudentDecisions())
        action = e["action"]
        if action == "settle":
            action = "accept" if e.get("attempt") else "override"
        problem = final_problem(e.get("final"), maximum) if action == "override" else ""
        if problem:
            d.skipped.append(f"decision #{e.get('seq', '?')} ({e['action']} {s}, {e.get('at', '?')} by "
                             f"{e.get('by', '?')}) sets the final score to {e.get('final')!r}: {problem}; not applied "
                             "(`make override` it again with the right score)")
            continue
        d.history.append(e)
        if action == "accept":
            d.accepted = e
        elif action == "withdraw":
            d.withdrawn[e["attempt"]] = e
            d.restored.pop(e["attempt"], None)
            if d.accepted and d.accepted.get("attempt") == e["attempt"]:
                d.accepted = None
        elif action == "unwithdraw":
            d.withdrawn.pop(e["attempt"], None)
            d.restored[e["attempt"]] = e
        elif action == "override":
            d.override = e
        elif action == "clear-override":
            d.override = None
    return out


# ---- the attempt a decision is about ----------------------------------------------------------
def attempt_fields(a) -> dict:
    """What a decision records of the attempt it names (accept, settle, withdraw, enter): its directory
    name and label, for people; its number and the digest of its files as read (attempts.Attempt.
    digest), which bind holds it to: a student can rename their attempt's directory, not its files."""
    return {"attempt": a.path.name, "label": a.label, "number": a.number, "digest": a.digest}


def bind(d: StudentDecisions, found: list) -> tuple[list, list[str]]:
    """The attempts the student's standing decisions (accept or settle with an attempt, withdraw,
    unwithdraw) are about, among `found` (their attempts now): [(decision, attempt)], and the cases for
    a person. A decision applies to the one attempt that still has its number (and kind: #N or EN) and
    the digest it recorded. One whose attempt is gone, renamed (its files now under another number) or
    changed (other files under its number) is not applied, and is a case naming the decision, the attempt
    and what changed -- unless a later decision stands in its place: one that names the attempt now
    holding its files, one that says which attempt counts (accept, settle with an attempt), or a final
    score (override, settle with a score).
    A line written before decisions recorded a digest (no `digest` key) names its attempt by the
    directory name alone, as it always did: it applies to the attempt of that name, and to nothing (with
    nothing said) where there is none."""
    bound, cases = [], []
    standing = ([d.accepted] if d.accepted else []) + list(d.withdrawn.values()) + list(d.restored.values())
    for e in standing:
        if "digest" not in e:  # an older line: by the directory name, as then
            named = [a for a in found if a.path.name == e["attempt"]]
            bound += [(e, a) for a in named[:1]]
            continue
        entered = str(e.get("label", "")).startswith("E")
        numbered = [a for a in found if a.number == e.get("number") and a.entered == entered]
        if len(numbered) == 1 and numbered[0].digest == e["digest"]:
            bound.append((e, numbered[0]))
        elif d.override is None and not _stood_in(d, e, found):
            cases.append(_unbound(e, numbered, found))
    return bound, cases


def _stood_in(d: StudentDecisions, e: dict, found: list) -> bool:
    """Whether a decision later than e takes its place (bind)."""
    holders = {a.path.name for a in found if e["digest"] and a.digest == e["digest"]}
    return any(later["seq"] > e["seq"] and (later["action"] == "accept" or later.get("attempt") in holders
                                            or later["action"] == "settle" and later.get("attempt"))
               for later in d.history)


def _unbound(e: dict, numbered: list, found: list) -> str:
    """The case of a decision whose attempt is gone, renamed or changed (bind): what, on which, what changed."""
    def files(digest):
        return digest[:12] or "unreadable"
    label = e.get("label") or f"#{e.get('number')}"
    head = (f"decision #{e['seq']} ({e['action']} {label}, {e.get('at', '?')} by {e.get('by', '?')}) was made on "
            f"attempt {label} ({e['attempt']}, files {files(e['digest'])})")
    elsewhere = [a for a in found if e["digest"] and a.digest == e["digest"] and a not in numbered]
    moved = " and ".join(f"attempt {a.label} ({a.path.name})" for a in elsewhere)
    if len(numbered) > 1:
        what = f"{len(numbered)} attempts are now numbered {label}: {', '.join(a.path.name for a in numbered)}"
    elif numbered:
        a = numbered[0]
        what = (f"attempt {label} ({a.path.name}) now holds other files ({files(a.digest)}"
                + (f": {a.problem}" if a.problem else "") + ")"
                + (f", and the files decided on are now {moved}" if moved else ""))
    elif moved:
        what = f"that attempt is gone: its files are now {moved}"
    else:
        what = "that attempt is gone, and no attempt holds its files"
    return f"{head}: {what}; the decision is not applied"


def decisions(cfg) -> dict[str, StudentDecisions]:
    """Every student's standing decisions; {} where the log cannot be read (a student's command)."""
    try:
        entries = course_state.log(cfg).entries()
    except PermissionError:
        return {}
    try:
        maximum = rubric_maximum(cfg)
    except course_state.StateError:
        maximum = None  # the finite and non-negative checks still hold
    return fold(entries, maximum)


def last_seq(cfg) -> int:
    try:
        return len(course_state.log(cfg).entries())
    except (PermissionError, course_state.StateError):
        return 0


# ---- what one student may see ----------------------------------------------------------------
def token(cfg, user: str, create: bool) -> str | None:
    """The student's token: a random name only they and the staff can read (.token in their folder of the drop box),
    under which the staff leave what that student may see. Made by the student's own commands; read
    through the drop box's door (attempts.py): a token that is a link, another's file or not a token
    is none."""
    try:
        text = attempts.read_token(cfg, user, TOKEN_NAME)
    except FileNotFoundError:
        text = None
    except OSError:
        return None
    if text is not None:
        return text
    if not create or not attempts.has_directory(cfg, user):
        return None
    path = cfg.dropbox_dir / attempts.folder_of(cfg.dropbox_dir, user) / TOKEN_NAME
    value = secrets.token_hex(16)
    tmp = path.with_name(f".token.{os.getpid()}")
    try:
        tmp.write_text(value + "\n")
        os.chmod(tmp, 0o640 if cfg.staff_group else 0o600)
        os.replace(tmp, path)
    except OSError:
        return None
    return value


def view_path(cfg, tok: str) -> Path:
    return course_state.public_root(cfg) / "to-student" / f"{tok}.json"


def read_view(cfg, user: str) -> dict | None:
    tok = token(cfg, user, create=False)
    if not tok:
        return None
    p = view_path(cfg, tok)
    if not course_state.believable(p, cfg.dropbox_dir):
        return None
    view = read_json(p)
    return view if view and view.get("student") == user else None


def write_views(cfg, students=None, official: dict | None = None):
    """Refresh what each student may see (their due dates under the published state, the staff's
    decisions about their attempts, and `official`: {student: their published grade}) for every
    student with a token; `students` limits it. Students without a token yet get theirs when they
    first run a command (`make submit`, `make status`) and the staff next publish or decide."""
    state = course_state.current(cfg)
    scfg = state.config() if state is not None else cfg
    try:
        extensions = class_files.load_extensions(scfg, None)
    except Exception:  # noqa: BLE001  (validated when published; an unreadable copy shows no extension)
        extensions = {}
    folded = decisions(cfg)
    gid = cfg.staff_gid
    out_dir = course_state.make_dir(course_state.public_root(cfg) / "to-student", 0o2771 if gid is not None else 0o711, gid)
    if students is not None:
        names = students
    else:  # the class (attempts.students: the roster's, when there is one); only they can have a token
        try:
            names = attempts.students(scfg)
        except Exception:  # noqa: BLE001  (a roster not readable here: whoever has a directory)
            names = attempts.directory_names(cfg)
    written = 0
    for student in names:
        tok = token(cfg, student, create=False)
        if not tok:
            continue
        path = view_path(cfg, tok)
        view = read_json(path) if path.exists() else {}
        ext = extensions.get(student)
        deadline = ext.deadline(scfg.deadline) if ext else scfg.deadline
        view.update({"schema": "gemmlab.student-view/1", "student": student, "state": state.id if state else None,
                     "updated": iso_seconds(now()),
                     "extension": None if ext is None else {
                         "due": iso(deadline.due), "late_days": ext.late_days,
                         "cutoff": iso(deadline.cutoff) if deadline.cutoff else None},
                     "decisions": folded[student].visible() if student in folded else []})
        if official is not None and student in official:
            view["official"] = official[student]
        write_atomic(path, json.dumps(view, indent=1) + "\n", 0o644)
        written += 1
    if out_dir.stat().st_uid == os.getuid():  # another TA's directory keeps the mode it was made with
        os.chmod(out_dir, 0o2771 if gid is not None else 0o711)
    return written
