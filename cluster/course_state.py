"""course_state.py — the course staff's state over a term, with one owner: the published course
state (a content-addressed snapshot of course.toml, the class files and the grader it pins) and the
decision log (DecisionLog, its one writer). Above it, student_standing.py folds the log per student
and leaves each student what they may see (to-student/, their token); sweeps.py writes a sweep's
run manifests and gradebook versions. Nothing else reads a decision or a published file itself.

    <course.toml's directory>/.course.toml.published   names the drop box: students' commands find
                                             the state through it, never reading the live file
    <dropbox>/.course/                       staff-owned; students may open files in it by name
        current                              the id of the published state (one line)
        states/<id>/course.toml              the students' half: course.toml without the staff's
                                             sections (what student commands and their jobs read)
        states/<id>/state.json               when, by whom, the grader tree it pins, its grading keys
        to-student/<token>.json              one student's view: their own due dates, the staff's
                                             decisions about their attempts, their official grade
    <dropbox>/<user>+<token>/.token          the student's view token (their own file; the staff read it)
    <sweeps>/.course/                        the staff's only (group-writable: any TA carries on)
        states/<id>/course.toml, state.json  the staff's half: the whole file, the whole record
        states/<id>/roster.txt, extensions.toml, aliases.toml   the class files of a state
        decisions.jsonl                      the decision log: one JSON object a line, appended only
        entered/<student>/entered-NNNN-<stamp>/     hand-ins the staff entered (e-mailed files)
        regrades/<student>-<attempt>-<time>/        one `make regrade`: its job script, log, grading/
    <sweep>/runs/run-NNN/manifest.json       who swept, when, with which flags, state and grader
    <sweep>/versions/NNN/                    each gradebook and its exports, never overwritten; the
                                             sweep's gradebook.csv, summary.md and export/* link to
                                             the newest (versions/index.jsonl is the ledger)

A state is published by `publish` only after the whole course validates (commands/course.py,
validate_course), and goes live (`current`) only once the decision log holds its line, so an edit with a
mistake never reaches a student: `make submit` keeps reading the last
published state, and staff commands say what is unpublished and wrong. A grade records the state
and grading keys it was made under; a later state decides whether it is still current, needs only a
rescore (points, targets, weights: the stored speeds suffice, no GPU) or a regrade (the grader, the
shapes or the timing settings changed). Decisions (accept, withdraw, override, settle, enter,
publish-grades) are appended with who, when, what and why; the current view is folded from them.
"""
import datetime as dt
import errno
import fcntl
import hashlib
import json
import os
import pwd
import socket
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from config import COURSE_DIR, without_staff_sections
from records import iso_seconds, now, read_json, write_atomic

STATE_SCHEMA = "gemmlab.course-state/1"
DECISION_SCHEMA = "gemmlab.decision/1"
POINTER_SCHEMA = "gemmlab.course-pointer/1"
# The class files a state holds beside course.toml, by (setting, file name in the state): all of them
# the staff's (the roster names every student; extensions carry their reasons; the leaderboard's
# aliases). A student learns nothing of the roster, not even their own place on it (a name anyone could
# test is everyone's to test), and only their own view.
CLASS_FILES = ((("cluster", "roster"), "roster.txt"),
               (("extensions", "file"), "extensions.toml"),
               (("leaderboard", "aliases"), "aliases.toml"))
# The students' half of a state: course.toml without the staff's sections (as the handout ships it),
# state.json without the staff's note and the class files' hashes.
# What a decision may be (docs/instructor-term.md, "Decisions"); each names a student but publish.
ACTIONS = ("publish", "accept", "withdraw", "unwithdraw", "override", "clear-override", "settle", "enter",
           "publish-grades")


class StateError(Exception):
    """The course state cannot be read or written as asked; the message says why and what to do."""


def who() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid-{os.getuid()}"


# Modes of what the staff's commands write, (file, directory): the whole staff group writes them (a
# second TA publishes, decides, sweeps); the directories are setgid, so the group is inherited. With
# no staff group, the owner alone. PUBLIC: what students read (the state they hand in under).
STAFF_ONLY = {True: (0o660, 0o2770), False: (0o600, 0o700)}
PUBLIC = {True: (0o664, 0o2775), False: (0o644, 0o755)}


def staff_modes(cfg, public=False) -> tuple[int, int]:
    return (PUBLIC if public else STAFF_ONLY)[cfg.staff_gid is not None]


def make_dir(path: Path, mode: int, gid=None):
    """A directory of the course state with its mode (group: the staff's, where there is one)."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        if gid is not None:
            os.chown(path, -1, gid)
        os.chmod(path, mode)
    return path


def is_staff(cfg) -> bool:
    """Root, a member of the staff group, or — where the course has none — the drop box's owner."""
    if os.getuid() == 0 or (cfg.staff_gid is not None and cfg.staff_gid in os.getgroups()):
        return True
    try:
        return cfg.staff_gid is None and cfg.dropbox_dir.stat().st_uid == os.getuid()
    except OSError:
        return False


def public_root(cfg) -> Path:
    return cfg.dropbox_dir / COURSE_DIR


def private_root(cfg) -> Path:
    return cfg.sweeps_dir / COURSE_DIR


def believable(path: Path, box: Path) -> bool:
    """A file of the course state counts only when no student could have written it: the state's
    directory is the drop box owner's (or root's) — students may create directories in the drop box,
    so a `.course` of theirs is refused — and nothing on the way is writable by others, or by a group
    other than the drop box's (the staff's)."""
    try:
        owner = box.stat()
        root_dir = box / COURSE_DIR
        if root_dir.stat().st_uid not in (0, owner.st_uid):
            return False
        for p in {root_dir, Path(path)}:
            st = p.stat()
            if st.st_mode & 0o002 or (st.st_mode & 0o020 and st.st_gid != owner.st_gid):
                return False
        return True
    except OSError:
        return False


def share_with_staff(cfg) -> list[str]:
    """(setup) What the staff's commands wrote before, made the whole staff group's, as they write it
    now: the course state's directories, the decision log and every sweep (group-writable, setgid
    directories). Only what this account may change (its own files; root: all). Returns what it
    changed, for setup to say."""
    gid = cfg.staff_gid
    if gid is None:
        return []
    changed = []
    for top in (public_root(cfg), private_root(cfg), cfg.sweeps_dir):
        if not top.is_dir():
            continue
        for d, dirs, files in os.walk(top):
            if Path(d) == public_root(cfg) / "to-student":
                dirs[:] = []  # one file per student token; its own mode (write_views)
                continue
            for path in [Path(d), *(Path(d) / f for f in files)]:
                st = os.lstat(path)
                if stat.S_ISLNK(st.st_mode) or (os.getuid() != 0 and st.st_uid != os.getuid()):
                    continue
                want = (st.st_mode | (0o2070 if stat.S_ISDIR(st.st_mode) else 0o060)) & 0o7777
                if st.st_gid != gid:
                    os.chown(path, -1, gid)
                if want != st.st_mode & 0o7777 or st.st_gid != gid:
                    os.chmod(path, want)
                    changed.append(path)
    return [f"{len(changed)} file(s) and director(ies) of the staff made writable by the group "
            f"{cfg.staff_group} (e.g. {changed[0]})"] if changed else []


# ---- the published state ---------------------------------------------------------------------
@dataclass
class CourseState:
    id: str
    info: dict
    public_dir: Path
    private_dir: Path

    @property
    def course_toml(self) -> Path:
        """course.toml as published: the staff's whole file where this account can read it (the
        staff's half of the state), else the students' copy, without the staff's sections. (A state
        published before the halves were split holds the whole file in the public half.)"""
        whole = self.private_dir / "course.toml"
        return whole if self.staff_half() and whole.is_file() else self.public_dir / "course.toml"

    def file(self, name: str) -> Path | None:
        """A class file of the state (roster.txt, extensions.toml, aliases.toml), or None. The staff's
        half; a state published before the halves were split kept the roster in the public half."""
        if name not in self.info.get("files", {}):
            return None
        old_public = self.public_dir / name
        return old_public if name == "roster.txt" and old_public.is_file() else self.private_dir / name

    def staff_half(self) -> bool:
        """Whether this account reads the staff's half of the state (the staff), or only the students'."""
        return os.access(self.private_dir, os.R_OK | os.X_OK)

    def config(self):
        """The course's configuration as published: course.toml of the state, its paths resolved
        from where the staff's file was, its class files the state's copies."""
        import config as config_mod
        overrides = {setting: self.file(fname) for setting, fname in CLASS_FILES}
        cfg = config_mod.load(self.course_toml, root=Path(self.info["root"]), files=overrides)
        cfg.state = self
        return cfg

    def describe(self) -> str:
        return f"{self.id} (published {self.info.get('created', '?')} by {self.info.get('by', '?')})"


def load_file(path):
    """The configuration in a course.toml file: a published state's own copy (the course.toml of
    <dropbox>/.course/states/<id>/, what grading jobs are given) is read as that state; any other
    file as it is (config.load)."""
    import config as config_mod
    path = Path(path).resolve()
    info = read_json(path.parent / "state.json") if path.name == "course.toml" else None
    if info and info.get("schema") == STATE_SCHEMA and info.get("id") == path.parent.name and info.get("private"):
        if Path(info["private"]).resolve() == path.parent:  # the staff's half (a sweep's jobs are given it)
            return CourseState(info["id"], info, Path(info.get("public") or path.parent), path.parent).config()
        return CourseState(info["id"], _staff_info(info), path.parent, Path(info["private"])).config()
    return config_mod.load(path)


def _staff_info(info: dict) -> dict:
    """A state's whole record where this account can read the staff's half, else the public one."""
    whole = read_json(Path(info["private"]) / "state.json")
    return whole if whole and whole.get("id") == info.get("id") else info


def state_for_copy(path) -> "CourseState | None":
    """The published state of the course a (possibly broken or unreadable) copy of course.toml belongs
    to: the pointer beside it (write_pointer), else its [cluster] dropbox, read on its own. For a student whose checkout's copy
    has a mistake of its own: the course's state is what counts, not their copy."""
    import tomllib
    pointed = state_from_pointer(path)
    if pointed is not None:
        return pointed
    path = Path(path).resolve()
    try:
        raw = (tomllib.loads(path.read_text()).get("cluster") or {}).get("dropbox") or "results/dropbox"
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return None
    box = Path(os.path.expanduser(str(raw)))
    return current_in(box if box.is_absolute() else path.parent / box)


def pointer_path(course_toml) -> Path:
    """The pointer beside the staff's course.toml (.course.toml.published): which drop box holds the
    course's published state. World-readable, written by setup and publish, so that a student's
    command finds the state without reading the live file, which may not parse mid-edit or may be
    closed to students (it holds the staff's sections)."""
    p = Path(os.path.abspath(course_toml))
    return p.with_name(f".{p.name}.published")


def write_pointer(cfg) -> str:
    """(setup, publish) Write the pointer beside cfg's course.toml; what to tell the staff ('' when it
    was there already). One that cannot be written raises StateError, saying where and what to do:
    without it, students' commands could find the course's state only through course.toml itself."""
    path = pointer_path(cfg.path)
    text = json.dumps({"schema": POINTER_SCHEMA, "dropbox": str(Path(os.path.abspath(cfg.dropbox_dir)))}) + "\n"
    try:
        if path.read_text() == text and not path.stat().st_mode & 0o022:
            return ""
    except OSError:
        pass
    try:
        write_atomic(path, text, 0o644)
    except OSError as e:
        try:
            owner = pwd.getpwuid(path.parent.stat().st_uid).pw_name
        except (OSError, KeyError):
            owner = "its owner"
        raise StateError(
            f"{path} cannot be written ({e.strerror}). It tells students' commands where the course's published "
            f"state is; without it they would have to read {cfg.path} itself, so that a mistake in an edit, or a "
            f"mode that closes it to students, would stop every hand-in. {path.parent} must be writable by the "
            f"account that runs setup and publish-course: run them as {owner}, "
            + (f"or let the staff write there (chgrp {cfg.staff_group} {path.parent}; chmod g+ws {path.parent}), "
               if cfg.staff_group else "")
            + "or keep course.toml in a directory of the staff's own (and name it in CONFIG=)") from None
    return f"{path}: tells students' commands where the published course state is (they never read {cfg.path.name})"


def state_from_pointer(course_toml) -> "CourseState | None":
    """The published state the pointer beside `course_toml` names, or None (no pointer: a student's
    own copy, a job's state file; or one anybody could have written)."""
    path = pointer_path(course_toml)
    try:
        st = path.lstat()
        info = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o002 or not isinstance(info, dict):
        return None
    box = info.get("dropbox")
    return current_in(Path(box)) if isinstance(box, str) and os.path.isabs(box) else None


def current_in(box: Path) -> "CourseState | None":
    """The published state of the course whose drop box is `box` (current, by the drop box alone)."""
    from types import SimpleNamespace
    return current(SimpleNamespace(dropbox_dir=Path(box)))


def state_dirs(cfg, state_id: str) -> tuple[Path, Path]:
    return public_root(cfg) / "states" / state_id, private_root(cfg) / "states" / state_id


def load_state(cfg, state_id: str) -> CourseState | None:
    pub = public_root(cfg) / "states" / state_id
    info = read_json(pub / "state.json")
    if not info or info.get("id") != state_id or not believable(pub / "state.json", cfg.dropbox_dir):
        return None
    return CourseState(state_id, _staff_info(info), pub, Path(info["private"]))


def current(cfg) -> CourseState | None:
    """The published state of the course whose drop box cfg names, or None (none published yet, or a
    record a student could have planted)."""
    record = public_root(cfg) / "current"
    if not believable(record, cfg.dropbox_dir):
        return None
    try:
        state_id = record.read_text().strip()
    except OSError:
        return None
    return load_state(cfg, state_id) if state_id else None


def class_file_bytes(cfg) -> dict[str, bytes]:
    """The class files cfg names, by their name in a state: what a state would hold ({} entries
    for settings that are not set)."""
    out = {}
    for (section, key), fname in CLASS_FILES:
        path = cfg.roster_path if (section, key) == ("cluster", "roster") else cfg.file_setting(section, key)
        if path is not None:
            try:
                out[fname] = path.read_bytes()
            except FileNotFoundError:
                continue  # not written yet (a roster early in the term): the state has none
            except OSError as e:
                raise StateError(f"{path}: cannot read it ({e.strerror}): it is [{section}] {key} of {cfg.path}") from None
    return out


def grader_identity(root: Path) -> dict:
    """The trusted tree a state pins: the hash of what goes into a grader build, and its git commit."""
    import toolchain
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "grader", "reference", "Makefile"],
                           capture_output=True, text=True)
    return {"tree": toolchain.grader_tree_digest(root), "commit": commit.stdout.strip() if commit.returncode == 0 else "",
            "dirty": bool(dirty.stdout.strip()) if dirty.returncode == 0 else None}


def grading_keys(rubric: dict, grader: dict, arch: str) -> dict:
    """What a grade under a state depends on: `measure` (the grader tree, the build's arch and what
    the grader measures: a change needs a regrade) and `rubric` (points, targets, weights: a change
    needs a rescore). rubric is `gemmlab-config --json` of the state's course.toml."""
    def digest(x):
        return hashlib.sha256(json.dumps(x, sort_keys=True).encode()).hexdigest()[:16]
    return {"grader": grader["tree"][:16], "arch": arch, "measurement": digest(rubric.get("measurement")),
            "rubric": digest(rubric.get("rubric"))}


def state_id_of(toml: bytes, files: dict[str, bytes], grader: dict) -> str:
    h = hashlib.sha256()
    h.update(b"course.toml\0" + toml + b"\0")
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name] + b"\0")
    h.update(b"grader\0" + grader["tree"].encode())
    return h.hexdigest()[:16]


def unpublished(cfg, state: CourseState | None) -> list[str]:
    """What the staff's live files hold that the published state does not, one entry a file, each
    naming the file and what differs (differences): [] when they agree."""
    if state is None:
        return ["no course state is published yet"]
    changed = []
    try:
        live_toml, published_toml = cfg.path.read_bytes(), state.course_toml.read_bytes()
        if live_toml != published_toml:
            changed.append(f"{cfg.path} ({differences(published_toml, live_toml, toml=True)})")
    except OSError as e:
        changed.append(f"{cfg.path} (cannot be compared: {e.strerror})")
    try:
        live = class_file_bytes(cfg)
    except StateError as e:
        return changed + [str(e)]
    paths = {fname: (cfg.roster_path if setting == ("cluster", "roster") else cfg.file_setting(*setting))
             for setting, fname in CLASS_FILES}
    for name in sorted(set(live) | set(state.info.get("files", {}))):
        p = state.file(name)
        try:
            published = p.read_bytes() if p is not None else b""
            same = p is not None and published == live.get(name)
            what = differences(published, live.get(name, b""), toml=name.endswith(".toml"))
        except OSError:
            same = hashlib.sha256(live.get(name, b"")).hexdigest() == state.info["files"].get(name, {}).get("sha256")
            what = "differs from the published copy"
        if not same:
            changed.append(f"{paths[name]} ({what})" if name in live else f"{name} (no longer set)")
    now_grader = grader_identity(cfg.grader_dir)
    if now_grader["tree"][:16] != state.info["grading"]["grader"]:
        was = (state.info.get("grader", {}).get("commit") or "?")[:10]
        changed.append(f"the grader tree {cfg.grader_dir} (published at commit {was}, now {now_grader['commit'][:10] or '?'}"
                       f"{' with uncommitted changes' if now_grader['dirty'] else ''})")
    return changed


def differences(published: bytes, live: bytes, toml: bool, most: int = 2) -> str:
    """What differs between a published file and the live one, as a TA reads it, at most `most` items:
    a TOML file's keys ('[late] penalty_percent_per_day 10 -> 20'), else the lines only one of them has
    ('+carol', '-bob')."""
    a, b = published.decode(errors="replace"), live.decode(errors="replace")
    items = _toml_changes(a, b) if toml else []
    if not items:
        old, new = a.splitlines(), b.splitlines()
        old_set, new_set = set(old), set(new)
        items = [f"+{line}" for line in new if line not in old_set] + [f"-{line}" for line in old if line not in new_set]
    if not items:
        return "the same lines in another order"
    shown = [item if len(item) <= 100 else item[:97] + "..." for item in items[:most]]
    return "; ".join(shown) + (f"; and {len(items) - most} more" if len(items) > most else "")


def publish(cfg, rubric: dict, note: str = "") -> tuple[CourseState, bool]:
    """Publish what cfg's files say now as the course's state (the caller has validated every file).
    Returns the state and whether it is new; an unchanged course publishes nothing."""
    toml = cfg.path.read_bytes()
    files = class_file_bytes(cfg)
    grader = grader_identity(cfg.grader_dir)
    state_id = state_id_of(toml, files, grader)
    before = current(cfg)
    gid = cfg.staff_gid
    pub_file, pub_dir = staff_modes(cfg, public=True)
    priv_file, priv_dir = staff_modes(cfg)
    pub_root = make_dir(public_root(cfg), pub_dir, gid)
    priv_root = make_dir(private_root(cfg), priv_dir, gid)
    if before is not None and before.id == state_id:
        return before, False
    pub, priv = state_dirs(cfg, state_id)
    if not (pub / "state.json").is_file():
        make_dir(pub_root / "states", pub_dir, gid)
        make_dir(priv_root / "states", priv_dir, gid)
        tmp_pub = pub.with_name(f".{state_id}.{os.getpid()}")
        tmp_priv = priv.with_name(f".{state_id}.{os.getpid()}")
        for d in (tmp_pub, tmp_priv):
            d.mkdir(parents=True, exist_ok=True)
        # The staff's half: the whole course.toml, the class files, the whole record. The students'
        # half: course.toml without the staff's sections, a record of
        # neither the staff's note nor the class files' hashes.
        (tmp_priv / "course.toml").write_bytes(toml)
        (tmp_pub / "course.toml").write_text(students_course_toml(toml.decode()))
        for _, fname in CLASS_FILES:
            if fname in files:
                (tmp_priv / fname).write_bytes(files[fname])
        info = {"schema": STATE_SCHEMA, "id": state_id, "created": iso_seconds(now()), "by": who(), "host": socket.gethostname(),
                "note": note, "source": str(cfg.path), "root": str(cfg.root), "private": str(priv), "public": str(pub),
                "files": {n: {"sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for n, b in files.items()},
                "grader": grader, "arch": cfg.arch or "", "rubric": rubric,
                "grading": grading_keys(rubric, grader, cfg.arch or ""), "previous": before.id if before else None}
        public_info = dict(info, note="", files={n: {} for n in files})
        (tmp_priv / "state.json").write_text(json.dumps(info, indent=2) + "\n")
        (tmp_pub / "state.json").write_text(json.dumps(public_info, indent=2) + "\n")
        if gid is not None:
            for p in (tmp_pub, tmp_priv, *tmp_pub.iterdir(), *tmp_priv.iterdir()):
                os.chown(p, -1, gid)
        for p in tmp_pub.iterdir():
            os.chmod(p, pub_file)
        os.chmod(tmp_pub, pub_dir)
        for p in tmp_priv.iterdir():
            os.chmod(p, priv_file)
        os.chmod(tmp_priv, priv_dir)
        for tmp, final in ((tmp_priv, priv), (tmp_pub, pub)):  # the public half last: it makes the state
            try:
                os.rename(tmp, final)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                import shutil
                shutil.rmtree(tmp, ignore_errors=True)  # published at the same moment by another
    state = load_state(cfg, state_id)
    if state is None:
        raise StateError(f"{pub}: the state just published cannot be read back: check the owner and modes of "
                         f"{public_root(cfg)} (it must be the drop box owner's, not writable by students)")
    # Live and logged, or neither: the new `current` is written beside the old one, the decision log
    # gets its line, and only then does `current` switch (a rename in the same directory).
    new_current = write_atomic(pub_root / "current", state_id + "\n", pub_file, switch=False)
    try:
        log(cfg).append("publish", state=state_id, previous=before.id if before else None,
                        changes=describe_changes(before, state), why=note)
    except BaseException:
        new_current.unlink(missing_ok=True)
        raise
    os.replace(new_current, pub_root / "current")
    return state, True


def students_course_toml(text: str) -> str:
    """course.toml as students may read it: without the staff's sections (the similarity check's
    thresholds, the LMS export, the leaderboard, the extensions file), as the handout ships it."""
    return without_staff_sections(text)


def describe_changes(before: CourseState | None, after: CourseState) -> list[str]:
    """What differs between two states, as a TA reads it: files, grader, and the rubric's keys."""
    if before is None:
        return ["first published state"]
    out = []
    if before.info.get("grader", {}).get("tree") != after.info.get("grader", {}).get("tree"):
        out.append(f"grader tree (commit {before.info['grader'].get('commit', '')[:10] or '?'} -> "
                   f"{after.info['grader'].get('commit', '')[:10] or '?'})")
    try:
        if before.course_toml.read_bytes() != after.course_toml.read_bytes():
            out += [f"course.toml: {c}" for c in _toml_changes(before.course_toml.read_text(),
                                                                after.course_toml.read_text())] or ["course.toml"]
    except OSError:
        out.append("course.toml")
    for name in sorted(set(before.info.get("files", {})) | set(after.info.get("files", {}))):
        if before.info.get("files", {}).get(name) != after.info.get("files", {}).get(name):
            out.append(name)
    return out


def _toml_changes(a: str, b: str) -> list[str]:
    """The keys that differ between two TOML texts: '[scoring.stages.tiled] performance_points 5 -> 7'
    ([] where either does not parse)."""
    import tomllib

    def flat(doc, prefix=""):
        out = {}
        for k, v in doc.items():
            if isinstance(v, dict):
                out.update(flat(v, f"{prefix}{k}."))
            else:
                out[f"{prefix}{k}"] = v
        return out
    try:
        fa, fb = flat(tomllib.loads(a)), flat(tomllib.loads(b))
    except tomllib.TOMLDecodeError:
        return []
    out = []
    for key in sorted(set(fa) | set(fb)):
        if fa.get(key) != fb.get(key):
            section, _, name = key.rpartition(".")
            where = f"[{section}] {name}" if section else name
            out.append(f"{where} {_show(fa.get(key))} -> {_show(fb.get(key))}")
    return out


def _show(v) -> str:
    if v is None:
        return "(unset)"
    if isinstance(v, dt.datetime):
        return v.isoformat()
    return json.dumps(v, default=str)


# ---- what a grade is worth under a state -----------------------------------------------------
def grade_standing(outcome: dict, state: CourseState) -> tuple[str, str]:
    """('current' | 'rescore' | 'regrade', why) for a published grade under `state`."""
    keys = (outcome or {}).get("grading")
    now_keys = state.info["grading"]
    if not keys:
        return "regrade", "graded before grades recorded their course state"
    if keys.get("grader") != now_keys["grader"]:
        return "regrade", "the grader changed since it was graded"
    if keys.get("arch") != now_keys["arch"]:
        return "regrade", f"the grading architecture changed ({keys.get('arch') or 'default'} -> {now_keys['arch'] or 'default'})"
    if keys.get("measurement") != now_keys["measurement"]:
        return "regrade", "what the grader measures changed ([bench], or the graded shapes)"
    if keys.get("rubric") != now_keys["rubric"]:
        return "rescore", "the rubric's points, targets or weights changed"
    return "current", ""


# ---- the decision log ------------------------------------------------------------------------
class DecisionLog:
    """<sweeps>/.course/decisions.jsonl: appended under a lock, never rewritten."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.path = private_root(cfg) / "decisions.jsonl"

    def entries(self) -> list[dict]:
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for n, line in enumerate(lines, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    raise StateError(f"{self.path}, line {n}: not a decision (the log is appended by the course tools "
                                     "only; restore the line from a backup)") from None
        return out

    def append(self, action: str, student: str = "", why: str = "", **fields) -> dict:
        if action not in ACTIONS:
            raise StateError(f"unknown decision {action!r}")
        gid = self.cfg.staff_gid
        file_mode, dir_mode = staff_modes(self.cfg)
        make_dir(self.path.parent, dir_mode, gid)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, file_mode)
        if os.fstat(fd).st_uid == os.getuid():  # whatever the umask: every TA appends to it
            os.fchmod(fd, file_mode)
        with os.fdopen(fd, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            seq = len(self.entries()) + 1
            entry = {"schema": DECISION_SCHEMA, "seq": seq, "at": iso_seconds(now()), "by": who(), "action": action}
            if student:
                entry["student"] = student
            entry.update({k: v for k, v in fields.items() if v is not None})
            entry["why"] = why
            f.write(json.dumps(entry, sort_keys=False) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return entry


def log(cfg) -> DecisionLog:
    return DecisionLog(cfg)


# ---- the staff's regrades of one attempt ---------------------------------------------------------
def new_regrade_dir(cfg, student: str, attempt: str) -> Path:
    """A new directory of the staff's for one regrade (`make regrade`): its job script, its log and
    its grading/, <sweeps>/.course/regrades/<student>-<attempt>-<time>/."""
    gid = cfg.staff_gid
    mode = 0o2770 if gid is not None else 0o700
    parent = make_dir(make_dir(private_root(cfg), mode, gid) / "regrades", mode, gid)
    return make_dir(parent / f"{student}-{attempt}-{now():%Y%m%dT%H%M%S%f}", mode, gid)
