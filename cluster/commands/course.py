"""commands/course.py — the staff's set-up of a course: validate its files as every tool reads
them, publish them as the course state, and close to students what is not theirs (setup).
"""
import os
import stat
from pathlib import Path

import course_state
import dropbox
import student_standing
from config import ConfigError
from course_check import validate_course


def cmd_validate(cfg, args):
    checked = validate_course(cfg, cfg.trusted_cache_dir / "trusted-build.log").checked
    notes = _close_to_students(cfg, fix=False)
    checked.append("what students may read: " + ("; ".join(notes) if notes else "closed to them"))
    print("course files valid:\n  " + "\n  ".join(checked))
    state = course_state.current(cfg)
    changed = course_state.unpublished(cfg, state)
    if changed:
        print(f"not published yet: {', '.join(changed)}. Students and sweeps use the published course state"
              + (f" {state.describe()}" if state else " (none yet)") + "; `make publish-course` publishes these files")
    else:
        print(f"published: these files are the course state {state.describe()}")
    return 0


def cmd_publish(cfg, args):
    """Validate the course's files as every tool reads them, then publish them as the course's state:
    what every student command, grading job and sweep uses from now on."""
    try:  # a roster not written yet is noted (early in the term); a sweep needs it
        v = validate_course(cfg, cfg.trusted_cache_dir / "trusted-build.log", roster_may_be_missing=True)
    except ConfigError as e:
        raise ConfigError(f"{e}\nNothing was published: students and sweeps keep the course state they had. Fix the "
                          "file, then `make publish-course` again") from None
    try:  # students find the state through it: without it, nothing is published
        pointer = course_state.write_pointer(cfg)
    except course_state.StateError as e:
        raise course_state.StateError(f"{e}.\nNothing was published: students and sweeps keep the course state they had") from None
    if pointer:
        print(f"publish: {pointer}")
    before = course_state.current(cfg)
    state, new = course_state.publish(cfg, v.rubric, note=args.why or "")
    if not new:
        student_standing.write_views(cfg)
        print(f"publish: nothing to publish: the course's files are the published state {state.describe()}")
        return 0
    changes = course_state.describe_changes(before, state)
    print(f"publish: course state {state.id} published; what changed since "
          + (f"{before.id}:" if before else "nothing before it:"))
    for c in changes:
        print(f"  {c}")
    n = student_standing.write_views(cfg)
    print(f"publish: students' commands (make submit, status, results) and grading jobs use it from now on; "
          f"{n} student view(s) refreshed. A sweep grades under it: grades made under an earlier state are "
          "rescored or regraded there as needed (make sweep says which and why)")
    return 0


# The files the staff keep up during the term, all of them the staff's: the roster (a student learns
# only their own membership, from the published state), extensions (with their reasons), aliases.
CLASS_FILES = (("extensions", "file", 0o660), ("leaderboard", "aliases", 0o660))


def _share_class_files(cfg) -> list[str]:
    """Give the staff group the files they edit during the term (with staff_group set): group and
    mode as CLASS_FILES says; a directory they cannot write (an editor replaces the file) is named."""
    files = [(cfg.file_setting(s, k), mode) for s, k, mode in CLASS_FILES]
    files.append((cfg.roster_path, 0o660))
    lines, named = [], set()
    for path, mode in files:
        if path is None or not path.exists():
            continue
        if cfg.staff_gid is not None:
            os.chown(path, -1, cfg.staff_gid)
            os.chmod(path, mode)
            lines.append(f"{path}: group {cfg.staff_group}, mode {oct(mode)}")
            d = path.parent.stat()
            if (d.st_gid != cfg.staff_gid or not d.st_mode & 0o020) and path.parent not in named:
                named.add(path.parent)
                lines.append(f"note: {path.parent} is not writable by {cfg.staff_group}: a TA's editor that replaces "
                             f"the file cannot save it there (chgrp {cfg.staff_group} {path.parent}; chmod g+ws "
                             f"{path.parent}), or keep the staff's files in a directory of their own")
        else:
            os.chmod(path, mode & 0o704 if mode & 0o004 else mode & 0o700)
    return lines


# What student_exposure finds, and how it is closed: (mode bits taken from others, whether the staff
# group must keep reading it, the command that does it).
EXPOSURES = {"writable": (0o002, False, "chmod o-w {path}"),
             "solution": (0o004, True, "chgrp {group} {path}; chmod g+r,o-r {path}"),
             "staff's": (0o007, False, "chmod o-rwx {path}")}


def student_exposure(cfg) -> list[tuple[Path, str, str]]:
    """What a student could read or write that they must not, as (path, what is wrong, its kind in
    EXPOSURES): in the trusted tree, anything others may write (grading builds from it) and the
    reference solutions' sources (reference/, its links to the stubs aside: students' gradings use the
    trusted build, which the published state names); the staff's live files (course.toml with the
    staff's sections, the roster, extensions, aliases: students read the published state), the
    staff's state (the sweeps, the decision log) and the roster of a state published before the
    state had a students' half. docs/security.md, "Who reads what", is the table of it."""
    out = []
    tree = cfg.grader_dir
    for d, dirs, files in os.walk(tree):
        dirs[:] = [x for x in dirs if not (Path(d) == tree and x == "build")]  # build outputs: the Makefile's
        for path in [Path(d), *(Path(d) / f for f in files)]:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                continue
            if st.st_mode & 0o002:
                out.append((path, "others may write it, and grading builds from this tree", "writable"))
            elif path.is_relative_to(tree / "reference") and stat.S_ISREG(st.st_mode) and st.st_mode & 0o004:
                out.append((path, "a reference solution students may read", "solution"))
    staffs = [cfg.path, cfg.roster_path, cfg.file_setting("extensions", "file"),
              cfg.file_setting("leaderboard", "aliases"), course_state.private_root(cfg), cfg.sweeps_dir]
    state = course_state.current(cfg)
    if state is not None:
        staffs.append(state.public_dir / "roster.txt")
    for path in staffs:
        try:
            st = os.stat(path) if path is not None else None
        except OSError:
            continue
        if st is not None and st.st_mode & 0o006:
            out.append((path, "the staff's, and others may read or write it (students read the published state)",
                        "staff's"))
    return out


def _close_to_students(cfg, fix: bool) -> list[str]:
    """setup (fix=True: each closed, and said) and validate (fix=False: refused, exit 2, with the
    commands) of student_exposure. Only a course with a staff group has students to close it to."""
    found = student_exposure(cfg)
    lines = [f"{path}: {why}" for path, why, _ in found]
    if cfg.staff_gid is None:
        return [f"note: {line} ([cluster] staff_group is not set: nothing is closed to students)" for line in lines]
    commands = [EXPOSURES[kind][2].format(path=path, group=cfg.staff_group) for path, _, kind in found]
    if found and not fix:
        raise ConfigError("students could read or write what they must not:\n  " + "\n  ".join(lines)
                          + "\nRun, as the files' owner:\n  " + "\n  ".join(commands) + "\n(or `setup`, which does it)")
    done = []
    for (path, why, kind), command in zip(found, commands):
        taken, staff_reads, _ = EXPOSURES[kind]
        mode = os.lstat(path).st_mode & 0o7777 & ~taken
        try:
            if staff_reads:  # the staff keep reading it (a TA's publish hashes the tree)
                os.chown(path, -1, cfg.staff_gid)
                mode |= 0o040
            os.chmod(path, mode)
        except PermissionError:
            done.append(f"WARNING: {path}: {why}, and it is not yours to change: its owner runs `{command}`")
            continue
        done.append(f"{path}: {why}: now {oct(mode)} ({command})")
    return done


def cmd_setup(cfg, args):
    # First the pointer beside course.toml, by which students' commands find the published state: a
    # layout where it cannot be written is refused before anything is made (StateError says what to do).
    try:
        pointer = course_state.write_pointer(cfg)
    except course_state.StateError as e:
        raise course_state.StateError(f"{e}.\nsetup made nothing: fix that, then run setup again") from None
    box, sweeps = dropbox.setup_dirs(cfg)
    cache = cfg.trusted_cache_dir
    cache.mkdir(parents=True, exist_ok=True)
    if cfg.staff_gid is not None:
        os.chown(cache, -1, cfg.staff_gid)
        os.chmod(cache, 0o2775)  # staff write, everyone reads the trusted build
    else:
        os.chmod(cache, 0o755)
    print(f"setup: drop box {box} ({oct(box.stat().st_mode & 0o7777)}), sweeps {sweeps} "
          f"({oct(sweeps.stat().st_mode & 0o7777)}), grader cache {cache}")
    for line in _share_class_files(cfg) + course_state.share_with_staff(cfg) + _close_to_students(cfg, fix=True):
        print(f"setup: {line}")
    # The course is set up once its files validate and are published: what students' commands and
    # grading jobs read (course_state.py). Building the trusted grader (gemmlab-config checks the rubric)
    # takes a few minutes the first time, then comes from the cache.
    v = validate_course(cfg, cache / "trusted-build.log", roster_may_be_missing=True)
    print("setup: course files valid: " + "; ".join(v.checked))
    state, new = course_state.publish(cfg, v.rubric, note=args.why or "setup")
    student_standing.write_views(cfg)
    if pointer:
        print(f"setup: {pointer}")
    print(f"setup: course state {state.id} {'published' if new else 'is published already'}: students' commands "
          "and grading jobs read it, never the file itself (`make publish-course` publishes an edit)")
    return 0
