#!/usr/bin/env python3
"""gemmlab_cluster.py — hand-ins and class-wide grading of GEMM Lab, on Slurm or on this machine.

Students (through the Makefile):
  make submit         submit --student-dir student     hand in student/ (+ report/report.pdf), queue grading
  make status         status                           your attempts and their grading jobs
  make results        results [--attempt N]            the results of your latest graded attempt
  make requeue        requeue --attempt N              queue the grading of your attempt N (where submit could not)
Course staff:
  setup                                                create the drop box, sweeps and cache directories
  make sweep          sweep [--name final] [--student S ... --force] [--local]
                                                       grade the attempt that counts of every student
  make sweep-status   sweep-status [--name N] [--follow] the sweeps; done / running / queued / failed of one
  make regrade        regrade --user S --attempt N     grade one attempt again for feedback, as a job of the staff's
  make gradebook-export  gradebook [--name final]      (re)build gradebook.csv, summary.md and export/
                                                       (canvas.csv: Canvas's import layout; grades.csv)
  make similarity     similarity [--name final]        similarity report of the hand-ins, per stage
  make leaderboard    leaderboard [--name final]       opt-in class leaderboard (Markdown, HTML, plot)
Internal (what the job scripts run): grade-attempt, sweep-task; sweep-local (a local sweep's grader).

Grading runs as Slurm batch jobs made from cluster/templates/ ([cluster] scheduler = "auto" or
"slurm"). Where sbatch is not on PATH nothing is graded on this machine: a sweep stops and says how
to load Slurm, a hand-in is stored (its time counts) without its grading. Grading here is chosen on
purpose (scheduler = "local", or sweep --local: local_grading.py), says where it runs first, and a
local sweep runs detached from the terminal.
Everything is configured in course.toml: [cluster], [deadline], [late], and for the staff tools
[extensions], [similarity], [export] and [leaderboard]; docs/instructor-guide.md and the pages it lists explain them. Exit status: 0 done, 1 refused or failed (the message says why), 2 bad configuration.
"""

import argparse
import dataclasses
import importlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The course staff's tools (gradebook, LMS exports, similarity, leaderboard and their pages): a
# folder of their own, which a handout leaves out whole (grader/scripts/handout.py). This is the one
# place that asks whether they are here.
STAFF_DIR = HERE / "staff"
sys.path.insert(0, str(HERE))
if STAFF_DIR.is_dir():
    sys.path.insert(0, str(STAFF_DIR))

import course_state  # noqa: E402
from attempt_records import Case  # noqa: E402
import dropbox  # noqa: E402
import toolchain  # noqa: E402
import scratch as scratch_space  # noqa: E402
import slurm  # noqa: E402
from commands.common import ARGV, Refused  # noqa: E402
from config import ConfigError  # noqa: E402
from course_state import StateError  # noqa: E402
from dropbox import SubmissionError  # noqa: E402


# ---- the commands -------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Command:
    """One command of the tool: its name, where it is (commands/<module>.py, function), who runs it
    (a student's commands and the grading job of a hand-in read the course's published state; the
    staff's read the files as the staff keep them), its help and its arguments."""
    name: str
    module: str
    function: str
    audience: str  # "student" or "staff"
    help: str
    arguments: tuple = ()
    defaults: tuple = ()  # (name, value) pairs the command's namespace starts with
    for_another: str = ""  # "module.function" that carries it out where --user names another account (the staff's)


def arg(*flags, **options) -> tuple:
    """One argument of a command, as argparse's add_argument takes it."""
    return flags, options


SWEEP_OPTIONS = (arg("--name", default="final", help="the sweep's name (a directory under [cluster] sweeps)"),
                 arg("--sweep", help="the sweep directory itself (instead of --name)"))
# The staff's decisions about one student (commands/decisions.py): each names the student and says why.
DECISION_OPTIONS = (arg("--user", required=True, help="the student"),
                    arg("--why", default="", help="why (recorded in the decision log with who and when)"))
DECISION_ATTEMPT = arg("--attempt", help="the attempt: 3 (their #3) or E1 (the first the staff entered)")
DECISION_FINAL = arg("--final", type=float, help="the final score (after any late penalty)")
DECISION_DEFAULTS = (("settles", False), ("clear", False), ("zero", False))

# Every command, in the order `--help` lists them.
COMMANDS = (
    Command("submit", "student", "cmd_submit", "student",
            "hand in a directory laid out like student/ and queue its grading", (
                arg("--student-dir", default="student", help="the stage files to hand in (default: student)"),
                arg("--report", help="the report PDF (default: <student-dir>/../report/report.pdf, if present)"),
                arg("--no-compile-check", action="store_true", help="hand in even without nvcc here"),
                arg("--user", help="(staff, as root) hand in for this student"),
                arg("--off-roster", action="store_true", help="(staff) hand in for a student the roster does not list"))),
    Command("status", "status", "cmd_status", "student", "your attempts and their grading",
            (arg("--user", help="another student's (staff)"),)),
    Command("hint", "status", "cmd_hint", "student",
            "the srun line that runs a command on one of the course's GPU nodes",
            (arg("words", nargs="*", help="the command to run there (default: none, the line alone)"),)),
    Command("course-file", "status", "cmd_course_file", "student",
            "the course.toml the course's commands read (the published one)"),
    Command("results", "status", "cmd_results", "student", "the results of your latest graded attempt", (
        arg("--attempt", type=int, help="this attempt number instead"),
        arg("--user", help="another student's (staff)"))),
    Command("requeue", "student", "cmd_requeue", "student",
            "queue the grading of one of your attempts (where make submit could not)", (
                arg("--attempt", required=True, help="the attempt's number (`make status` lists them)"),
                arg("--user", help="(staff, as root) for this student"))),
    Command("regrade", "decisions", "cmd_regrade", "staff",
            "(staff) grade one attempt of a student again for feedback, as a job of this account's", (
                arg("--user", required=True, help="the student"),
                arg("--attempt", required=True, help="the attempt: 3 (their #3) or E1 (one the staff entered)"))),
    Command("grade-attempt", "student", "cmd_grade_attempt", "student",
            "(job) grade one attempt into <attempt>/grading", (
                arg("--attempt", required=True),
                arg("--into", help="the results directory instead of <attempt>/grading (the staff's regrade)"))),
    Command("setup", "course", "cmd_setup", "staff", "(staff) create the drop box, sweeps and cache directories", (
        arg("--build", action="store_true", help=argparse.SUPPRESS),  # what setup always does now
        arg("--why", default="", help=argparse.SUPPRESS))),
    Command("publish", "course", "cmd_publish", "staff",
            "(staff) validate course.toml and the class files, then publish them as the course state every "
            "student command, grading job and sweep uses",
            (arg("--why", default="", help="a note for the decision log"),)),
    Command("accept", "decisions", "cmd_accept", "staff",
            "(staff) the attempt that counts for a student, whatever the late policy says",
            (*DECISION_OPTIONS, DECISION_ATTEMPT), DECISION_DEFAULTS),
    Command("override", "decisions", "cmd_override", "staff",
            "(staff) set a student's final score by hand (--clear: computed again)",
            (*DECISION_OPTIONS, DECISION_FINAL, arg("--clear", action="store_true", help="take the override back")),
            DECISION_DEFAULTS),
    Command("settle", "decisions", "cmd_settle", "staff",
            "(staff) settle a needs_review case: --attempt N counts, or --zero / --final",
            (*DECISION_OPTIONS, DECISION_ATTEMPT, DECISION_FINAL,
             arg("--zero", action="store_true", help="the final score is 0")), DECISION_DEFAULTS),
    Command("enter", "decisions", "cmd_enter", "staff",
            "(staff) enter a hand-in that reached the staff another way, with the time it was handed in", (
                *DECISION_OPTIONS,
                arg("--student-dir", required=True, help="the stage files, laid out like student/"),
                arg("--report", help="the report PDF, if any"),
                arg("--submitted-at", required=True, help="when it was handed in, with a time zone "
                    "(e.g. 2026-12-04T23:41:00-08:00: the e-mail's time)")), DECISION_DEFAULTS),
    Command("decisions", "decisions", "cmd_decisions", "staff",
            "(staff) the decision log: who decided what, when and why", (arg("--user", help="one student's"),)),
    Command("publish-grades", "grades", "cmd_publish_grades", "staff",
            "(staff) show each student their official grade of a sweep (make results)",
            (*SWEEP_OPTIONS, arg("--why", default="", help="a note for the decision log"))),
    Command("sweep", "sweep", "cmd_sweep", "staff",
            "(staff) grade every student's attempt that counts; build the gradebook", (
                arg("--before-deadline", action="store_true", help="sweep although the course's deadline has not "
                    "passed (students who can still hand in are pending)"),
                arg("--name", default="final", help="the sweep's name (a directory under [cluster] sweeps)"),
                arg("--student", action="append", help="only this student (repeatable): regrade one"),
                arg("--force", action="store_true", help="grade again even when graded for the same attempt"),
                arg("--local", action="store_true", help="grade on this machine (detached from the terminal), not "
                    "on Slurm: every student's code runs here"))),
    Command("withdraw", "student", "cmd_withdraw", "student",
            "take back one of your attempts: no sweep counts it (an earlier one counts)", (
                arg("--attempt", required=True, help="the attempt's number (`make status` lists them)"),
                arg("--undo", action="store_true", help="count it again"),
                arg("--user", help="(staff) withdraw a student's attempt for them; needs --why"),
                arg("--why", default="", help="(staff) why, for the decision log")),
            for_another="decisions.staff_withdraw"),
    Command("validate", "course", "cmd_validate", "staff",
            "(staff) check course.toml, the roster and the class files as every tool reads them (builds the "
            "trusted grader once)"),
    Command("sweep-task", "sweep", "cmd_sweep_task", "staff", "(job) one task of a sweep's array", (
        arg("--sweep", required=True), arg("--run", required=True), arg("--task", type=int, required=True))),
    Command("sweep-local", "sweep", "cmd_sweep_local", "staff",
            "(internal) the grader of a local sweep's run (started by sweep)",
            (arg("--sweep", required=True), arg("--run", required=True))),
    Command("gradebook", "grades", "cmd_gradebook", "staff",
            "(staff) build gradebook.csv, summary.md and the LMS files of a sweep", SWEEP_OPTIONS),
    Command("similarity", "pages", "cmd_similarity", "staff",
            "(staff) similarity report of a sweep's hand-ins, stage by stage", SWEEP_OPTIONS),
    Command("leaderboard", "pages", "cmd_leaderboard", "staff", "(staff) the opt-in class leaderboard of a sweep",
            SWEEP_OPTIONS),
    Command("sweep-status", "grades", "cmd_sweep_status", "staff",
            "(staff) the sweeps, and the progress of one (default: the latest)", (
                arg("--name", help="the sweep (default: the one planned or run last)"),
                arg("--follow", type=float, nargs="?", const=30.0, default=0.0, metavar="SECONDS",
                    help="report again every SECONDS (default 30) until its jobs have left the queue"))),
)
BY_NAME = {c.name: c for c in COMMANDS}
# Commands a student runs (and the grading job of a hand-in): they read the course's published state
# (course_state.py), never the copy of course.toml in the student's checkout.
STUDENT_COMMANDS = tuple(c.name for c in COMMANDS if c.audience == "student")
# Commands that read the staff's course.toml as given: they check it, or make the published state of it.
LIVE_COMMANDS = ("setup", "publish", "validate")
# Commands that grade (or may: submit on the local scheduler, sweep's trusted build): SIGTERM, SIGINT
# and SIGHUP remove their scratch and unfinished results on the way out (scratch.py).
GRADING_COMMANDS = ("submit", "requeue", "regrade", "grade-attempt", "sweep", "sweep-task", "sweep-local")
# The command modules that import the staff's tools (cluster/staff/), which a handout does not have:
# their commands say so there (main).
STAFF_TOOL_MODULES = ("sweep", "grades", "pages")


def parser():
    ap = argparse.ArgumentParser(prog="gemmlab_cluster.py", description=__doc__.splitlines()[0],
                                 epilog="docs/instructor-guide.md lists the page that explains each command.")
    ap.add_argument("--config", default="course.toml", help="the course configuration (default: course.toml)")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for c in COMMANDS:
        p = sub.add_parser(c.name, help=c.help)
        for flags, options in c.arguments:
            p.add_argument(*flags, **options)
        p.set_defaults(**dict(c.defaults))
    return ap


def implementation(command: Command, args=None):
    """The function that carries out a command, from its module (commands/<module>.py), loaded now: its
    for_another where the command names another account (--user) and has one."""
    module, function = command.module, command.function
    user = getattr(args, "user", None) if args is not None else None
    if command.for_another and user and user != dropbox.current_user():
        module, function = command.for_another.split(".")
    return getattr(importlib.import_module(f"commands.{module}"), function)


# ---- which configuration, and running one --------------------------------------------------------
def staffs_run(args) -> bool:
    """Whether a run is the staff's: a staff command, or a student's command that names a student
    (--user: status, results, requeue, withdraw, root's submit). A student's own command is not."""
    return args.command not in STUDENT_COMMANDS or bool(getattr(args, "user", None))


def course_config(cfg, command: str, staff: bool | None = None):
    """The configuration a command works with: the course's published state (its course.toml, roster
    and class files as published), except for the commands that check or publish the files
    themselves; a course with no published state yet works from the file as given. A staff's run
    (staff: default, whether the command is a staff command) is told of what the files hold that is
    not published (tell_the_staff); a student's own run never is."""
    if command in LIVE_COMMANDS or cfg.state is not None:
        return cfg  # a grading job names its state's own course.toml: that state, pinned
    state = course_state.current(cfg)
    if state is None:
        return cfg
    used = state.config()
    used.live = cfg
    if staff is None:
        staff = command not in STUDENT_COMMANDS
    if staff:
        tell_the_staff(state, live=cfg)
        return used
    try:
        same = cfg.path.read_bytes() == state.course_toml.read_bytes()
    except OSError:
        same = False
    if not same and cfg.path != used.path and not _staffs_own_file(cfg.path, state):
        print(f"(the course's published configuration is used; {cfg.path} is not)", file=sys.stderr)
    return used


def tell_the_staff(state, live=None, path=None, mistake: ConfigError | None = None):
    """The one note of every staff's run (staffs_run) about the course's files: a mistake in
    course.toml (path, mistake), or what the live files (live) hold that the published state does
    not, each file with what differs; and that `make publish-course` publishes them. Said only where
    this account reads the staff's half of the state: never to a student."""
    if not state.staff_half():
        return
    uses = f"Students, grading jobs and sweeps use the published course state {state.describe()}"
    if mistake is not None:
        print(f"note: {path} has a mistake, so it is not published: {mistake}. {uses}; fix the file, then "
              "`make publish-course`", file=sys.stderr)
        return
    changed = course_state.unpublished(live, state)
    if changed:
        print(f"note: not published: {', '.join(changed)}. {uses}; `make publish-course` validates and publishes "
              "the files", file=sys.stderr)


def _staffs_own_file(path, state) -> bool:
    """Whether `path` is the course.toml the published state was made from: the staff's own file, which
    students name in CONFIG= (docs/instructor-setup.md, step 5). Its unpublished edits and mistakes are
    told to the staff, never to a student, who could do nothing about them; a student's own copy is
    another file, and they are told it is not used."""
    try:
        return Path(path).resolve() == Path(state.info.get("source") or "/nonexistent").resolve()
    except OSError:
        return False


def main(argv=None):
    args = parser().parse_args(argv)
    ARGV[:] = list(sys.argv[1:] if argv is None else argv)
    cfg = None
    try:
        try:
            # A student's command finds the published state by the pointer beside the course's file, never
            # reading the live file: an edit that does not parse, or a file closed to students, stops no
            # hand-in (the staff hear of it from their own next command).
            pointed = course_state.state_from_pointer(args.config) if not staffs_run(args) else None
            cfg = pointed.config() if pointed is not None else \
                course_config(course_state.load_file(args.config), args.command, staff=staffs_run(args))
        except ConfigError as e:
            # A mistake in the file as given stops the commands that check, publish or sweep it; every
            # other command works on the course's published state, and the staff are told.
            state = course_state.state_for_copy(args.config) if args.command not in (*LIVE_COMMANDS, "sweep") else None
            if state is None and args.command == "publish":
                raise ConfigError(f"{e}\nNothing was published: students and sweeps keep the course state they had. "
                                  "Fix the file, then `make publish-course` again") from None
            if state is None:
                raise
            if staffs_run(args):
                tell_the_staff(state, path=args.config, mistake=e)
            elif not _staffs_own_file(args.config, state):  # the staff's edit is theirs to hear about
                print(f"(the course's published configuration is used; {args.config} is not: {e})", file=sys.stderr)
            cfg = state.config()
        # Everything this tool writes: owner and staff group only; the staff's commands write what the
        # whole staff group may carry on with (a second TA publishes, decides, sweeps, exports).
        command = BY_NAME[args.command]
        if command.module in STAFF_TOOL_MODULES and not STAFF_DIR.is_dir():
            print(f"error: `{args.command}` is a command of the course staff; this copy (a handout) does not have "
                  f"its tools (cluster/staff/)", file=sys.stderr)
            return 2
        run = implementation(command, args)
        old_umask = dropbox.set_umask(cfg, staff=args.command not in STUDENT_COMMANDS)
        try:
            if args.command in GRADING_COMMANDS:
                with scratch_space.stop_cleanly():
                    return run(cfg, args)
            return run(cfg, args)
        finally:
            os.umask(old_umask)  # main() may run inside another program (the tests): leave its umask as it was
    except scratch_space.Stopped as e:
        print(f"{args.command}: {e}: its scratch and unfinished results were removed", file=sys.stderr)
        return 128 + e.signum
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:  # a staff tool's library (matplotlib, copydetect, ...) is not installed
        e.name = (e.name or "?").split(".")[0]  # the package to install: matplotlib, not matplotlib.pyplot
        print(f"error: `{args.command}` needs the Python module '{e.name}', which {sys.executable} does not have. "
              f"Install it (`make setup` installs every one the course uses; or `{sys.executable} -m pip install "
              f"{e.name}`), or run with a Python that has it (make ... PYTHON=/path/to/python3)", file=sys.stderr)
        return 2
    except (Refused, SubmissionError, StateError, toolchain.BuildError, slurm.SlurmError, FileNotFoundError,
            scratch_space.UnsafeScratch) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except Case as e:  # a student's drop box that cannot be read (the door's case, a cell's limit): for a person
        print(f"error: {e}", file=sys.stderr)
        return 1
    except PermissionError as e:
        where = str(e.filename or e)
        hint = (" Hand-ins are readable only by their owner and the course staff." if
                cfg and where.startswith(str(cfg.dropbox_dir)) else " Ask course staff to check its permissions.")
        print(f"error: permission denied: {where}.{hint}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    # copydetect picks fingerprints by Python's string hash, which is salted afresh in every process
    # unless PYTHONHASHSEED is set: fix it, so that a similarity report is the same each time.
    if "similarity" in sys.argv[1:] and os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv], dict(os.environ, PYTHONHASHSEED="0"))
    sys.exit(main())
