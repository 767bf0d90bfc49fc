"""class_files.py — the per-student files course staff keep beside course.toml, read and checked:

  * the extensions file ([extensions] file): a table per student with an extended due date or a
    number of late days, e.g.

        [alice]
        due = 2026-12-08T23:59:00-08:00     # always with a time zone
        reason = "medical note"             # optional; shown in the gradebook
        [bob]
        late_days = 2                       # the due date moves 2 days later

  * the leaderboard aliases ([leaderboard] aliases): one line per student who opted in to the
    class leaderboard, with the alias they chose:  alice = "warp-speed"

  * the roster ([cluster] roster): one cluster user name per line, # comments. Every name must be a
    valid user name, listed once, not the same as another but for case, and (unless [cluster]
    roster_accounts = false) an account on this machine: a name that is none of these would be
    graded "missing" and exported as 0.

Every mistake raises ConfigError naming the file, the line, the key and the value found, and what
to do. Whether a name is a student of the course is checked against the class the caller knows
(the roster and the drop box, or a sweep's plan), so a misspelt name never passes silently.
"""
import datetime as dt
import difflib
import pwd
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from config import ConfigError, Deadline, parse_when
from records import iso

EXTENSION_KEYS = ("due", "late_days", "reason")
# A cluster user name: starts with a letter, digit or '_'; then letters, digits, '_', '.', '-';
# at most 32 characters (what useradd and directory services accept everywhere).
USER_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}\Z")
# Letters, digits, spaces and - _ . ; starts with a letter or digit; at most 24 characters.
ALIAS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 _.\-]{0,23}\Z")


@dataclass
class Extension:
    student: str
    due: dt.datetime          # the student's own due date (UTC)
    late_days: int            # 0 when the due date was given directly
    reason: str
    line: int | None

    def describe(self) -> str:
        """What the gradebook shows as applied, e.g. '2 late days (due 2026-12-06T23:59:00Z)'."""
        when = iso(self.due)
        what = (f"{self.late_days} late day{'s' if self.late_days != 1 else ''} (due {when})"
                if self.late_days else f"due {when}")
        return f"{what}; {self.reason}" if self.reason else what

    def deadline(self, course: Deadline) -> Deadline:
        return course.shifted(self.due)


def _read_toml(path: Path, what: str, setting: str) -> tuple[dict, list[str]]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(f"{setting} = {str(path)!r}: no such file. Create it (docs/instructor-term.md and "
                          f"instructor-grading.md show the format of the {what}) or set {setting} = \"\"") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} ({e.strerror})") from None
    try:
        return tomllib.loads(text), text.splitlines()
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}. A date is written like "
                          "2026-12-08T23:59:00-08:00 and a text in quotes") from None


def line_of(lines: list[str], name: str, key: str | None = None) -> int | None:
    """The 1-based line where `name` is defined: a table header [name] or a key `name = ...`;
    with `key`, the line of that key inside name's table (or name's line when it is inline)."""
    quoted = rf'(?:{re.escape(name)}|"{re.escape(name)}"|\'{re.escape(name)}\')'
    header = re.compile(rf"^\s*\[\s*{quoted}\s*\]")
    assign = re.compile(rf"^\s*{quoted}\s*=")
    for i, text in enumerate(lines):
        if assign.match(text):
            return i + 1
        if header.match(text):
            if key is None:
                return i + 1
            for j in range(i + 1, len(lines)):
                if re.match(r"^\s*\[", lines[j]):
                    break
                if re.match(rf"^\s*{re.escape(key)}\s*=", lines[j]):
                    return j + 1
            return i + 1
    return None


def _at(path: Path, line: int | None) -> str:
    return f"{path}, line {line}" if line else str(path)


def _unknown_student(path, line, student, known, class_source) -> ConfigError:
    close = difflib.get_close_matches(student, sorted(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{_at(path, line)}: {student!r} is not a student of this course{hint}: "
                       f"{class_source}. Fix the name, or add the student to the roster")


def on_roster(cfg, user: str) -> bool | None:
    """Whether `user` is on the course's roster (None: the course has none). Only the staff can tell:
    the roster file is theirs, and a student learns nothing of it (PermissionError for them)."""
    if cfg.roster_path is None:
        return None
    return user in read_roster(cfg)


def read_roster(cfg) -> list[str]:
    """The names of [cluster] roster, in file order ([] without a roster), every one checked."""
    path = cfg.roster_path
    if path is None:
        return []
    try:
        lines = path.read_text().splitlines()
    except OSError as e:
        raise ConfigError(f"{cfg.path}: [cluster] roster = {cfg.values['roster']!r}: cannot read {path} "
                          f"({e.strerror}): create it, one user name per line, or set roster = \"\"") from None
    seen, folded, names, not_accounts = {}, {}, [], []
    for n, raw in enumerate(lines, 1):
        name = raw.split("#", 1)[0].strip()
        if not name:
            continue
        if not USER_NAME_RE.match(name):
            raise ConfigError(f"{path}, line {n}: {name!r} is not a user name (letters, digits, '_', '.' and '-', "
                              "no spaces, at most 32 characters): write the student's cluster login, one per line")
        if name in seen:
            raise ConfigError(f"{path}, line {n}: {name!r} is listed twice (line {seen[name]} too): remove one")
        if name.lower() in folded:
            other, line = folded[name.lower()]
            raise ConfigError(f"{path}, lines {line} and {n}: {other!r} and {name!r} differ only in case; user "
                              "names are case-sensitive, so one of them is probably not the student's login: keep the "
                              "one the student logs in with")
        seen[name], folded[name.lower()] = n, (name, n)
        names.append(name)
        if cfg.values["roster_accounts"]:
            try:
                pwd.getpwnam(name)
            except KeyError:
                not_accounts.append(f"{name!r} (line {n})")
    if not_accounts:
        raise ConfigError(f"{path}: {len(not_accounts)} name(s) are not accounts on this machine: "
                          f"{', '.join(not_accounts[:10])}{' ...' if len(not_accounts) > 10 else ''}. Each would be "
                          "graded 'missing' and exported as 0: fix the names (the students' cluster logins), or set "
                          f"[cluster] roster_accounts = false in {cfg.path} where this machine cannot see the accounts")
    return names


def load_extensions(cfg, known_students: set[str] | None, class_source: str = "") -> dict[str, Extension]:
    """student -> Extension from [extensions] file (empty without one). known_students: the class
    (None: do not check the names, e.g. when there is no roster yet)."""
    path = cfg.file_setting("extensions", "file")
    if path is None:
        return {}
    doc, lines = _read_toml(path, "extensions file", f"{cfg.path}: [extensions] file")
    course = cfg.deadline
    out = {}
    for student, entry in doc.items():
        line = line_of(lines, student)
        if known_students is not None and student not in known_students:
            raise _unknown_student(path, line, student, known_students, class_source)
        if not isinstance(entry, dict):
            raise ConfigError(f"{_at(path, line)}: {student} = {entry!r} should be a table, e.g.\n"
                              f"  [{student}]\n  late_days = 2      (or: due = 2026-12-08T23:59:00Z)")
        for key in entry:
            if key not in EXTENSION_KEYS:
                close = difflib.get_close_matches(key, EXTENSION_KEYS, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"use {', '.join(EXTENSION_KEYS)}"
                raise ConfigError(f"{_at(path, line_of(lines, student, key))}: [{student}] {key}: unknown key; {hint}")
        if course.due is None:
            raise ConfigError(f"{_at(path, line)}: [{student}] has an extension but the course has no due "
                              f"date: set [deadline] due in {cfg.path} first")
        if ("due" in entry) == ("late_days" in entry):
            raise ConfigError(f"{_at(path, line)}: [{student}] needs exactly one of due = <date-time> "
                              "or late_days = <days>" + (" (it has both)" if "due" in entry else ""))
        reason = entry.get("reason", "")
        if not isinstance(reason, str):
            raise ConfigError(f"{_at(path, line_of(lines, student, 'reason'))}: [{student}] reason = {reason!r} "
                              "should be a text in quotes")
        if "due" in entry:
            where = _at(path, line_of(lines, student, "due"))
            due = _parse_due(where, student, entry["due"])
            if due <= course.due:
                raise ConfigError(f"{where}: [{student}] due = {iso(due)} is not after the course's due date "
                                  f"({iso(course.due)}, [deadline] due): an extension must be later. "
                                  "Check the year, month and time zone")
            days = 0
        else:
            days = entry["late_days"]
            where = _at(path, line_of(lines, student, "late_days"))
            if isinstance(days, bool) or not isinstance(days, int) or days < 1:
                raise ConfigError(f"{where}: [{student}] late_days = {days!r} should be a whole number of "
                                  "days, 1 or more (e.g. late_days = 2)")
            due = course.due + dt.timedelta(days=days)
        out[student] = Extension(student=student, due=due, late_days=days, reason=reason.strip(), line=line)
    return out


def _parse_due(where: str, student: str, raw) -> dt.datetime:
    try:
        return parse_when(raw)
    except ValueError as e:
        raise ConfigError(f"{where}: [{student}] due = {e}") from None


def normalized_alias(alias: str) -> str:
    """How aliases are compared for clashes: case and runs of spaces, '-', '_' and '.' do not count."""
    return re.sub(r"[\s_.\-]+", "-", alias.strip().lower()).strip("-")


def load_aliases(cfg, known_students: set[str], class_source: str) -> dict[str, str]:
    """student -> alias of the students who opted in ([leaderboard] aliases; {} without a file)."""
    path = cfg.file_setting("leaderboard", "aliases")
    if path is None:
        return {}
    doc, lines = _read_toml(path, "leaderboard aliases", f"{cfg.path}: [leaderboard] aliases")
    taken: dict[str, tuple[str, int | None]] = {}
    user_names = {normalized_alias(s) for s in known_students}
    out = {}
    for student, alias in doc.items():
        line = line_of(lines, student)
        if student not in known_students:
            raise _unknown_student(path, line, student, known_students, class_source)
        if not isinstance(alias, str) or not ALIAS_RE.match(alias.strip()):
            raise ConfigError(f"{_at(path, line)}: {student} = {alias!r} is not a usable alias: use 1 to 24 "
                              "letters, digits, spaces, '-', '_' or '.', starting with a letter or digit, "
                              f'in quotes (e.g. {student} = "warp-speed")')
        alias = alias.strip()
        key = normalized_alias(alias)
        if key in taken:
            other, other_line = taken[key]
            raise ConfigError(f"{_at(path, line)}: alias clash: {student} = {alias!r} is the same alias as "
                              f"{other} = {doc[other]!r} (line {other_line}); aliases must differ by more than "
                              "case and punctuation. Ask one of them to choose another")
        if key in user_names:
            raise ConfigError(f"{_at(path, line)}: {student} = {alias!r} is a student's user name, which "
                              "the leaderboard must not show; ask them to choose another alias")
        taken[key] = (student, line)
        out[student] = alias
    return out


def class_source(cfg) -> str:
    """Where the class list comes from, for messages about a name that is not in it."""
    if cfg.roster_path:
        return f"the roster {cfg.roster_path} does not list them (with a roster, only its students are students)"
    return (f"no roster is set ([cluster] roster), so the class is whoever has handed in, and {cfg.dropbox_dir} "
            "has no folder of theirs")
