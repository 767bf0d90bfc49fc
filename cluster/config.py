"""config.py — the sections of course.toml the cluster tools read, with tomllib: [cluster], [deadline],
[late], and the staff tools' [extensions], [similarity], [export] and [leaderboard].

Every key has a default here (DEFAULTS below is the one list of them); a missing key takes its
default, and a wrong one raises ConfigError with a message that names the section, the key, the
value found and what would be accepted. Paths are relative to the directory of course.toml.
Other sections of course.toml belong to other tools and are not read here.
"""
import dataclasses
import datetime as dt
import difflib
import grp
import os
import re
import shutil
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader" / "scripts"))
import confine  # noqa: E402  (what a confined compile may read: SYSTEM_COMPILER_PATHS)

# The course's own directory: in the drop box (the published state students read) and beside the
# sweeps (the staff's private state, the hand-ins they entered).
COURSE_DIR = ".course"


class ConfigError(Exception):
    """A missing, unreadable or wrong course.toml value; the message says which and what to do."""


# (section, key) -> (default, one line of help used in error messages)
DEFAULTS = {
    ("course", "name"): ("gemm-lab", "the course's short name (letters, digits, '.', '_', '-'): handout, LMS columns"),
    ("course", "title"): ("", "the course's title, shown in the handout and the reports"),
    ("cluster", "scheduler"): ("auto", '"auto" or "slurm" (grade on Slurm; where sbatch is not on PATH nothing '
                               'is graded), or "local" (grade on the machine the tool runs on)'),
    ("cluster", "dropbox"): ("results/dropbox", "directory of the hand-ins, one sub-directory per student"),
    ("cluster", "sweeps"): ("results/sweeps", "directory of the class-wide sweeps and gradebooks"),
    ("cluster", "staff_group"): ("", "Unix group of the course staff (may read every hand-in); \"\" = nobody but the owner"),
    ("cluster", "grader_root"): ("", "the trusted GEMM Lab tree grading builds from; \"\" = the directory of course.toml"),
    ("cluster", "trusted_cache"): ("results/grader-cache", "prebuilt grader libraries: staff write, everyone reads"),
    ("cluster", "scratch"): ("", "where a grading job builds; \"\" = $TMPDIR or /tmp (node-local)"),
    ("cluster", "arch"): ("", "GPU architecture of the grading nodes, e.g. \"sm_90\"; \"\" = the Makefile's choice"),
    ("cluster", "partition"): ("", "Slurm partition; \"\" = the cluster's default"),
    ("cluster", "account"): ("", "Slurm account; \"\" = the user's default"),
    ("cluster", "qos"): ("", "Slurm QoS; \"\" = the default"),
    ("cluster", "gres"): ("gpu:1", 'GPUs per grading job: "gpu:1", "gpu:h100:1" (pins a GPU type), or "" for none'),
    ("cluster", "constraint"): ("", 'node features a grading job needs (Slurm --constraint), e.g. "h100" or "a100|h100"; "" = any node'),
    ("cluster", "cpus_per_task"): (2, "CPU cores per grading job (nvcc uses them)"),
    ("cluster", "mem"): ("", 'memory per grading job, e.g. "16G"; "" = the cluster\'s default'),
    ("cluster", "time_limit"): ("00:30:00", 'Slurm time limit of one grading job: "MM", "HH:MM:SS" or "D-HH:MM:SS"'),
    ("cluster", "sweep_concurrency"): (8, "most grading jobs of one sweep running at once (the array's %N)"),
    ("cluster", "max_source_kb"): (256, "largest accepted stage file, in KiB"),
    ("cluster", "max_report_mb"): (20, "largest accepted report/report.pdf, in MiB"),
    ("cluster", "queued_per_student"): (2, "most grading jobs of one student waiting or running at once; a hand-in "
                                        "beyond it is stored (it counts for the deadline) but not queued"),
    ("cluster", "graded_per_hour"): (6, "most hand-ins of one student queued for grading in any hour; beyond it "
                                     "they are stored but not queued"),
    ("cluster", "roster"): ("", "file with one student user name per line (# comments); \"\" = whoever handed in"),
    ("cluster", "roster_accounts"): (True, "every roster name must be an account on this machine (false where "
                                     "the login node cannot see the students' accounts)"),
    ("cluster", "confine_builds"): (True, "compile every stage file of a grading in a sandbox (Linux Landlock) that "
                                    "may read only the hand-in, the stage API headers, the CUDA toolkit and the "
                                    "system compiler; false = unconfined (a stage file can then #include any file "
                                    "the grading account can read)"),
    ("cluster", "python"): ("", "Python 3.11+ on the compute nodes; \"\" = the one running this tool"),
    ("deadline", "due"): ("", "due date with a time zone, e.g. 2026-12-04T23:59:00Z; \"\" = no deadline"),
    ("deadline", "grace_minutes"): (0, "minutes after `due` that still count as on time"),
    ("late", "policy"): ("latest", '"latest", "prefer-on-time" or "on-time-only" (see docs/instructor-term.md)'),
    ("late", "cutoff"): ("", "after this date nothing counts; \"\" = no cutoff"),
    ("late", "penalty_percent_per_day"): (0, "percent of the total taken per started day late"),
    ("late", "max_penalty_percent"): (100, "the most the late penalty takes"),
    ("extensions", "file"): ("", "TOML file of per-student extensions ([student] with due = <date> or "
                             "late_days = N), relative to course.toml; \"\" = none"),
    ("cells", "cpu_seconds"): (30, "CPU seconds of one cell (a per-student step of the staff's tools: reading a "
                               "student's drop box directory, a record, a report; fingerprinting a hand-in for the "
                               "similarity report)"),
    ("cells", "wall_seconds"): (60, "wall-clock seconds of one cell"),
    ("cells", "memory_mb"): (1024, "memory one cell may add to the tool's own, in MiB"),
    ("cells", "file_size_mb"): (16, "largest file one cell may write, in MiB"),
    ("cells", "open_files"): (64, "descriptors one cell may hold open"),
    ("cells", "output_mb"): (16, "largest answer of one cell, in MiB"),
    ("cells", "compile_cpu_seconds"): (300, "CPU seconds of each process of a grading's compile of one stage file "
                                       "(one that runs into a compile limit does not compile: the student's)"),
    ("cells", "compile_wall_seconds"): (600, "wall-clock seconds of a grading's compiles of the hand-in's stage files, "
                                        "all of them together"),
    ("cells", "compile_memory_mb"): (4096, "address space of each process of a grading's compile of one stage file, "
                                     "in MiB"),
    ("cells", "compile_file_mb"): (64, "largest file each process of a grading's compile of one stage file may "
                                   "write (its object, its temporary files), in MiB"),
    ("similarity", "noise_threshold"): (25, "shortest run of matching (tokenized) characters that counts"),
    ("similarity", "guarantee_threshold"): (30, "runs at least this long are always found (>= noise_threshold)"),
    ("similarity", "report_threshold"): (0.5, "pairs at or above this similarity (0 to 1) are shown side by "
                                         "side, copied code highlighted, in the per-stage reports"),
    ("similarity", "top_pairs"): (10, "most pairs shown per group of similar hand-ins (index page and side-by-side "
                                  "pages); every group is shown"),
    ("similarity", "archive"): ([], "earlier terms' hand-ins every hand-in is also compared with: a list of "
                                "drop boxes (<folder>/attempt-*/) or sweep directories (plan.json), relative to course.toml"),
    ("export", "assignment"): ("", "name of the LMS assignment; columns are '<name>: <stage>' and "
                               "'<name>: total'; \"\" = [course] name"),
    ("export", "canvas_roster"): ("", "the course's Canvas gradebook export (CSV), which gives each student's "
                                  "name, ID, SIS User ID and Section; \"\" = the user name alone"),
    ("export", "canvas_match"): ("SIS Login ID", 'the canvas_roster column that holds the cluster user name: '
                                 '"SIS Login ID", "SIS User ID" or "ID"'),
    ("export", "stage_columns"): (False, "one LMS column per stage besides the total (Canvas makes each a new "
                                  "assignment on every import unless its header carries the assignment id)"),
    ("leaderboard", "aliases"): ("", "TOML file of the students who opted in: student = \"alias\"; "
                                 "\"\" = no leaderboard"),
    ("leaderboard", "stages"): (["reuse", "tensor"], "stages ranked (those no result names are skipped)"),
    ("leaderboard", "size"): (10, "places shown per stage and precision"),
}
SECTIONS = tuple(dict.fromkeys(s for s, _ in DEFAULTS))
# The sections of course.toml other tools read, and who checks their keys: with SECTIONS, every
# section a course.toml may have; any other is a mistake (a typo such as [deadlines] would otherwise
# leave the course without a deadline).
OTHER_SECTIONS = {
    "bench": "the grader (gemmlab-config)",
    "scoring": "the grader (gemmlab-config)",
    "report": "make report (report/report_data.py)",
    "handout": "make handout (grader/scripts/handout.py)",
}
COURSE_SECTIONS = (*SECTIONS, *OTHER_SECTIONS)

SCHEDULERS = ("auto", "slurm", "local")
CANVAS_MATCH_COLUMNS = ("SIS Login ID", "SIS User ID", "ID")
LATE_POLICIES = ("latest", "prefer-on-time", "on-time-only")
# Slurm's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
TIME_LIMIT_RE = re.compile(r"^(\d+-)?\d+(:\d{1,2}){0,2}\Z")
GRES_RE = re.compile(r"^gpu(:[A-Za-z0-9_.-]+)?:[1-9]\d*\Z")
MEM_RE = re.compile(r"^[1-9]\d*[KMGT]?\Z")
# Slurm's --constraint: feature names joined by & | , with [ ] ( ) groups and *count (no spaces).
CONSTRAINT_RE = re.compile(r"^[A-Za-z0-9_.:=*&|,()\[\]-]+\Z")
SLURM_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+\Z")


# The Slurm options that put a job on one of the course's GPU nodes, from [cluster]: the grading jobs'
# (sbatch_options) and the line every hint tells a student to run a command with (srun_line).
GPU_NODE_KEYS = (("partition", "--partition"), ("account", "--account"), ("qos", "--qos"), ("gres", "--gres"),
                 ("constraint", "--constraint"))


def gpu_node_options(cluster: dict) -> list[str]:
    """["--partition=gpu", "--account=cs101", "--gres=gpu:1", ...]: the keys of [cluster] that are set."""
    return [f"{flag}={cluster[key]}" for key, flag in GPU_NODE_KEYS if cluster.get(key)]


def srun_line(cluster: dict) -> str:
    """The command that runs what follows it on a GPU node of the course's cluster, e.g. "srun
    --partition=gpu --account=cs101 --gres=gpu:1": the one line every hint prints (make hint)."""
    return " ".join(["srun", *gpu_node_options(cluster)])


def course_time(t: dt.datetime, zone: dt.tzinfo | None) -> str:
    """`t` in UTC, then in `zone` (the course's) where that is not UTC."""
    utc = t.astimezone(dt.timezone.utc)
    text = utc.isoformat(timespec="seconds").replace("+00:00", "Z")
    if zone is None or utc.astimezone(zone).utcoffset() == dt.timedelta(0):
        return text
    local = utc.astimezone(zone)
    return f"{text} ({local.strftime('%Y-%m-%d %H:%M')} {local.isoformat()[-6:]}, the course's time)"


@dataclass
class Deadline:
    due: dt.datetime | None
    grace: dt.timedelta
    policy: str
    cutoff: dt.datetime | None
    penalty_per_day: float
    max_penalty: float
    # The course's time zone: the offset course.toml writes its due date with (kept by an extension's
    # shifted due date, which comes in UTC); None without a due date.
    zone: dt.tzinfo | None = None

    def shown(self, t: dt.datetime) -> str:
        """A moment of this course as students read it: in UTC, and in the course's time zone where
        that is another, e.g. "2026-12-05T07:59:00Z (2026-12-04 23:59 -08:00, the course's time)"."""
        return course_time(t, self.zone)

    def lateness(self, when: dt.datetime) -> dt.timedelta:
        """How late an attempt made at `when` is (zero or negative: on time)."""
        if self.due is None:
            return dt.timedelta(0)
        return when - (self.due + self.grace)

    def shifted(self, due: dt.datetime) -> "Deadline":
        """This deadline with another due date (a student's extension); the cutoff, if any, moves
        by as much, so the extension's days are not eaten by the class cutoff."""
        if self.due is None:
            return self
        cutoff = self.cutoff + (due - self.due) if self.cutoff is not None else None
        return dataclasses.replace(self, due=due, cutoff=cutoff)

    def open_until(self) -> dt.datetime | None:
        """The last moment a new hand-in can still change which attempt counts: the cutoff where one
        is set (a late hand-in counts until then), else the due date with its grace; under
        on-time-only, the due date with its grace. None without a due date."""
        if self.due is None:
            return None
        on_time_end = self.due + self.grace
        if self.policy == "on-time-only" or self.cutoff is None:
            return on_time_end
        return max(self.cutoff, on_time_end)

    def penalty_percent(self, when: dt.datetime) -> float:
        late = self.lateness(when)
        if late <= dt.timedelta(0):
            return 0.0
        days = -(-late // dt.timedelta(days=1))  # started days: 1 s late is one day
        return min(self.max_penalty, days * self.penalty_per_day)


@dataclass
class ClusterConfig:
    path: Path
    course: str
    values: dict
    deadline: Deadline
    settings: dict = field(default_factory=dict)  # "section.key" -> value, every section read here
    # A published course state (course_state.py) is read from its own copy of course.toml: its paths
    # are resolved from where the staff's file is (root), and its class files are the state's copies
    # (files: (section, key) -> the copy, or None where the state has none).
    root: Path | None = None
    files: dict = field(default_factory=dict)
    state: object = None  # the course_state.CourseState this configuration was read from, if any
    live: object = None   # with a state: the staff's own file as given (the sweep compares the two)

    def __post_init__(self):
        self.root = Path(self.root) if self.root is not None else self.path.parent

    def __getattr__(self, name):
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def _path(self, key, fallback):
        raw = self.values[key] or fallback
        p = Path(os.path.expanduser(raw))
        return p if p.is_absolute() else (self.root / p)

    @property
    def dropbox_dir(self) -> Path:
        return self._path("dropbox", DEFAULTS[("cluster", "dropbox")][0])

    @property
    def sweeps_dir(self) -> Path:
        return self._path("sweeps", DEFAULTS[("cluster", "sweeps")][0])

    @property
    def grader_dir(self) -> Path:
        return self._path("grader_root", ".").resolve()

    @property
    def trusted_cache_dir(self) -> Path:
        return self._path("trusted_cache", DEFAULTS[("cluster", "trusted_cache")][0])

    @property
    def source(self) -> Path:
        """The course.toml the staff edit: for a published state's copy, the file it was published from
        (what a message that names a setting should point at)."""
        if self.live is not None:
            return self.live.path
        if self.state is not None and self.state.info.get("source"):
            return Path(self.state.info["source"])
        return self.path

    def setting(self, section: str, key: str):
        return self.settings[f"{section}.{key}"]

    def similarity_archive(self) -> list[tuple[Path, str]]:
        """[similarity] archive as (directory, layout): "sweep" (a sweep directory, its plan.json naming
        each student's attempt that counted) or "dropbox" (<folder>/attempt-*/ below it). Checked where
        it is used (make validate, make sweep, make similarity), not on every load: a moved archive
        must not stop the students' `make submit`. ConfigError names the entry and what was found."""
        out = []
        for raw in self.setting("similarity", "archive"):
            p = Path(os.path.expanduser(raw))
            p = p if p.is_absolute() else self.root / p
            where = f"{_where(self.path, 'similarity', 'archive')}: {raw!r}"
            if not p.is_dir():
                raise ConfigError(f"{where}: {p} {'is not a directory' if p.exists() else 'does not exist'}; "
                                  "name an earlier term's drop box or sweep directory, or take the entry out")
            if (p / "plan.json").is_file():
                out.append((p, "sweep"))
            elif any(q.is_dir() and re.match(r"^attempt-\d+-", q.name) for q in p.glob("*/attempt-*")):
                out.append((p, "dropbox"))
            else:
                raise ConfigError(f"{where}: {p} is neither a sweep directory (no plan.json) nor a drop box "
                                  "(no <folder>/attempt-*/ directories in it)")
        return out

    def file_setting(self, section: str, key: str) -> Path | None:
        """A path-valued setting, relative to course.toml's directory; None when it is \"\"."""
        if (section, key) in self.files:
            return self.files[(section, key)] if self.setting(section, key) else None
        raw = self.setting(section, key)
        if not raw:
            return None
        p = Path(os.path.expanduser(raw))
        return p if p.is_absolute() else (self.root / p)

    @property
    def roster_path(self) -> Path | None:
        if ("cluster", "roster") in self.files:
            return self.files[("cluster", "roster")] if self.values["roster"] else None
        return self._path("roster", "") if self.values["roster"] else None

    @property
    def scratch_dir(self) -> Path:
        if self.values["scratch"]:
            return self._path("scratch", "")
        return Path(os.environ.get("TMPDIR") or "/tmp")

    @property
    def python_exe(self) -> str:
        return self.values["python"] or sys.executable

    @property
    def staff_gid(self) -> int | None:
        name = self.values["staff_group"]
        return grp.getgrnam(name).gr_gid if name else None

    def grading_mode(self, local=False) -> str:
        """Where grading runs: "slurm" (batch jobs), "local" (on this machine, chosen on purpose:
        scheduler = "local", or local=True from a command's --local) or "no-slurm": the course grades
        on Slurm ("auto" or "slurm") but sbatch is not on PATH here. "no-slurm" never grades on this
        machine: a sweep stops, a hand-in is stored without its grading (local_grading.py says so)."""
        if local or self.values["scheduler"] == "local":
            return "local"
        return "slurm" if shutil.which("sbatch") else "no-slurm"

    def use_slurm(self) -> bool:
        """Grading goes to Slurm. False does not mean "grade here": see grading_mode()."""
        return self.grading_mode() == "slurm"

    def sbatch_options(self) -> list[str]:
        """The #SBATCH lines every grading job shares, from the config (only the keys set)."""
        opts = gpu_node_options(self.values)
        if self.values["mem"]:
            opts.append(f"--mem={self.values['mem']}")
        opts.append(f"--cpus-per-task={self.values['cpus_per_task']}")
        opts.append(f"--time={self.values['time_limit']}")
        return opts


def _under(a: str, b: str) -> bool:
    return a == b or a.startswith(b.rstrip("/") + "/")


def confinement_overlap(cfg, readable=()) -> str | None:
    """Where a confined compile ([cluster] confine_builds) could read something of the staff's: a
    staff-only path (the drop box, the sweeps, the reference solutions, the scratch of other gradings,
    the compiled hand-ins, the extensions and Canvas files) that lies under a directory the sandbox
    lets it read (the system compiler's, the stage API headers, `readable`: the CUDA toolkit), or the
    other way round. None when there is none; else a sentence naming both paths and what to do."""
    roots = [*confine.SYSTEM_COMPILER_PATHS, str(cfg.grader_dir / "grader" / "include"), *map(str, readable)]
    staff = {"[cluster] dropbox": cfg.dropbox_dir, "[cluster] sweeps": cfg.sweeps_dir,
             "the reference solutions": cfg.grader_dir / "reference", "[cluster] scratch": cfg.scratch_dir,
             "the compiled hand-ins": cfg.trusted_cache_dir / "objects",
             "[extensions] file": cfg.file_setting("extensions", "file"),
             "[export] canvas_roster": cfg.file_setting("export", "canvas_roster")}
    # Scratch holds the gradings' own directories (gemmlab-<uid>-...), not its whole tree: a readable
    # directory that merely lies below it (a trusted tree under /tmp) exposes no grading's files.
    holds_only_its_gradings = {"[cluster] scratch"}
    for what, path in staff.items():
        if path is None:
            continue
        mine = os.path.realpath(path)
        for root in roots:
            theirs = os.path.realpath(root)
            inside = _under(theirs, mine) and (what not in holds_only_its_gradings or
                                               os.path.relpath(theirs, mine).startswith("gemmlab-"))
            if _under(mine, theirs) or inside:
                return (f"{what} ({path}) and {root}, which a confined compile of a stage file may read "
                        f"([cluster] confine_builds), overlap: a stage file could read {what} into its "
                        f"object. Move {what} out of {root}, or set confine_builds = false")
    return None


def _where(path, section, key):
    return f"{path}: [{section}] {key}"


def _line_of(path, pattern) -> str:
    """', line N' of the first line of the file that matches `pattern`, or ''."""
    try:
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            if re.match(pattern, line):
                return f", line {n}"
    except OSError:
        pass
    return ""


def _only_known_sections(path, doc):
    """Every top-level name of course.toml is a section some tool reads; a key outside any section
    or an unknown section is named, with the section probably meant."""
    for name, value in doc.items():
        if name in COURSE_SECTIONS:
            continue
        if not isinstance(value, dict):
            owner = next((s for (s, k) in DEFAULTS if k == name), None)
            hint = f" (it belongs under [{owner}])" if owner else ""
            line = _line_of(path, r'\s*"?' + re.escape(name) + r'"?\s*=')
            raise ConfigError(f"{path}{line}: '{name}' is a key outside "
                              f"any section{hint}: keys go under a [section] header")
        close = difflib.get_close_matches(name, COURSE_SECTIONS, n=1, cutoff=0.6)
        hint = f" (did you mean [{close[0]}]?)" if close else ""
        line = _line_of(path, r'\s*\[+\s*' + re.escape(name) + r'\s*[\].]')
        raise ConfigError(f"{path}{line}: unknown section "
                          f"[{name}]{hint}; the sections of course.toml are: "
                          + ", ".join(f"[{s}]" for s in COURSE_SECTIONS))


def parse_when(raw) -> dt.datetime:
    """A TOML offset date-time, or an ISO 8601 string with a time zone, in UTC. A ValueError says
    what is wrong with the value; the caller adds where it was found."""
    example = "write it like 2026-12-04T23:59:00Z or 2026-12-04T23:59:00-08:00"
    if isinstance(raw, str):
        try:
            value = dt.datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{raw!r} is not a date-time; {example}") from None
    elif isinstance(raw, dt.datetime):
        value = raw
    elif isinstance(raw, dt.date):
        raise ValueError(f"{raw} has no time of day; {example}")
    else:
        raise ValueError(f"{raw!r} is not a date-time; {example}")
    if value.tzinfo is None:
        raise ValueError(f"{raw} has no time zone, so it is ambiguous on a cluster; add Z (UTC) or an "
                         "offset such as -08:00")
    return value.astimezone(dt.timezone.utc)


def course_zone(doc) -> dt.tzinfo | None:
    """The course's time zone: the offset its [deadline] due is written with (None without one)."""
    raw = doc.get("deadline", {}).get("due", "")
    if isinstance(raw, str):
        try:
            raw = dt.datetime.fromisoformat(raw.strip().replace("Z", "+00:00")) if raw.strip() else None
        except ValueError:
            return None
    return raw.tzinfo if isinstance(raw, dt.datetime) else None


def _parse_time(path, section, key, raw):
    """[section] key as a date-time (parse_when); "" -> None."""
    if raw in ("", None):
        return None
    try:
        return parse_when(raw)
    except ValueError as e:
        raise ConfigError(f"{_where(path, section, key)} = {e}") from None


def _check_type(path, section, key, value, default):
    want = type(default)
    ok = isinstance(value, want) and not (want in (int, float) and isinstance(value, bool))
    if want is int and isinstance(value, float) and value.is_integer():
        return int(value)
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if want is list:
        ok = ok and all(isinstance(v, str) for v in value)
        value = list(value) if ok else value
    if not ok:
        kind = {str: "a string", int: "a whole number", float: "a number", bool: "true or false",
                list: "a list of strings"}[want]
        raise ConfigError(f"{_where(path, section, key)} = {value!r} should be {kind} "
                          f"({DEFAULTS[(section, key)][1]})")
    return value


def load(path, root=None, files=None) -> ClusterConfig:
    """root and files: a published course state's copy (ClusterConfig above)."""
    path = Path(path).resolve()
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such course configuration; pass --config <course.toml> "
                          "(make: CONFIG=<course.toml>)") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None

    _only_known_sections(path, doc)
    values = {}
    for section in SECTIONS:
        table = doc.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [{section}] should be a table")
        known = [k for (s, k) in DEFAULTS if s == section]
        for key in table:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f"; known keys: {', '.join(known)}"
                raise ConfigError(f"{_where(path, section, key)}: unknown key{hint}")
        for key in known:
            default = DEFAULTS[(section, key)][0]
            raw = table.get(key, default)
            if (section, key) in (("deadline", "due"), ("late", "cutoff")):
                values[f"{section}.{key}"] = _parse_time(path, section, key, raw)
            else:
                values[f"{section}.{key}"] = _check_type(path, section, key, raw, default)

    c = {k.split(".", 1)[1]: v for k, v in values.items() if k.startswith("cluster.")}

    def bad(key, value, why):
        raise ConfigError(f"{_where(path, 'cluster', key)} = {value!r}: {why}")

    if c["scheduler"] not in SCHEDULERS:
        bad("scheduler", c["scheduler"], f"use one of {', '.join(SCHEDULERS)}")
    if not TIME_LIMIT_RE.match(c["time_limit"]):
        bad("time_limit", c["time_limit"], 'not a Slurm time limit; use e.g. "00:30:00" (HH:MM:SS), '
            '"45" (minutes) or "1-00:00:00" (days)')
    if c["gres"] and not GRES_RE.match(c["gres"]):
        bad("gres", c["gres"], 'use "gpu:N" or "gpu:<type>:N" (e.g. "gpu:1", "gpu:a100:1"), or "" for none')
    if c["constraint"] and not CONSTRAINT_RE.match(c["constraint"]):
        bad("constraint", c["constraint"], 'use node features as Slurm\'s --constraint takes them, e.g. "h100", '
            '"a100|h100" or "h100&nvlink" (no spaces), or "" for any node')
    if c["mem"] and not MEM_RE.match(c["mem"]):
        bad("mem", c["mem"], 'use a size such as "16G" or "8000M", or "" for the cluster default')
    for key in ("partition", "account", "qos"):
        if c[key] and not SLURM_NAME_RE.match(c[key]):
            bad(key, c[key], "a Slurm name has only letters, digits, '_', '.' and '-'")
    if c["arch"] and not re.match(r"^sm_\d+[a-z]?$", c["arch"]):
        bad("arch", c["arch"], 'use a CUDA architecture such as "sm_80" or "sm_90", or "" for the default')
    for key, low in (("cpus_per_task", 1), ("sweep_concurrency", 1), ("max_source_kb", 1), ("max_report_mb", 1),
                     ("queued_per_student", 1), ("graded_per_hour", 1)):
        if c[key] < low:
            bad(key, c[key], f"must be at least {low}")
    if c["staff_group"]:
        try:
            grp.getgrnam(c["staff_group"])
        except KeyError:
            bad("staff_group", c["staff_group"], "no such Unix group on this machine "
                "(create it, e.g. `groupadd gemmlab-staff`, or set \"\" for owner-only hand-ins)")

    policy = values["late.policy"]
    if policy not in LATE_POLICIES:
        raise ConfigError(f"{_where(path, 'late', 'policy')} = {policy!r}: use one of {', '.join(LATE_POLICIES)}")
    grace = values["deadline.grace_minutes"]
    if grace < 0:
        raise ConfigError(f"{_where(path, 'deadline', 'grace_minutes')} = {grace}: must be 0 or more")
    for key in ("penalty_percent_per_day", "max_penalty_percent"):
        v = values[f"late.{key}"]
        if not 0 <= v <= 100:
            raise ConfigError(f"{_where(path, 'late', key)} = {v}: must be between 0 and 100")
    due, cutoff = values["deadline.due"], values["late.cutoff"]
    if cutoff and not due:
        raise ConfigError(f"{_where(path, 'late', 'cutoff')} is set but [deadline] due is not: set the due date too")
    if cutoff and due and cutoff < due:
        raise ConfigError(f"{_where(path, 'late', 'cutoff')} = {cutoff.isoformat()} is before "
                          f"[deadline] due = {due.isoformat()}")

    def bad_in(section, key, why):
        raise ConfigError(f"{_where(path, section, key)} = {values[f'{section}.{key}']!r}: {why}")

    noise, guarantee = values["similarity.noise_threshold"], values["similarity.guarantee_threshold"]
    if noise < 5:
        bad_in("similarity", "noise_threshold", "must be at least 5 (shorter runs match everywhere)")
    if guarantee < noise:
        bad_in("similarity", "guarantee_threshold", f"must be at least noise_threshold ({noise})")
    if not 0 <= values["similarity.report_threshold"] <= 1:
        bad_in("similarity", "report_threshold", "must be between 0 and 1 (a fraction of the file)")
    for key in ("similarity.top_pairs", "leaderboard.size", *(f"cells.{k}" for s_, k in DEFAULTS if s_ == "cells")):
        if values[key] < 1:
            bad_in(*key.split("."), "must be at least 1")
    if values["export.canvas_match"] not in CANVAS_MATCH_COLUMNS:
        bad_in("export", "canvas_match", f"use one of {', '.join(CANVAS_MATCH_COLUMNS)}")
    if not values["leaderboard.stages"]:
        bad_in("leaderboard", "stages", 'name at least one stage, e.g. ["reuse"]')

    deadline = Deadline(due=due, grace=dt.timedelta(minutes=grace), policy=policy, cutoff=cutoff,
                        penalty_per_day=float(values["late.penalty_percent_per_day"]),
                        max_penalty=float(values["late.max_penalty_percent"]), zone=course_zone(doc))
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", values["course.name"]):
        bad_in("course", "name", "use letters, digits, '.', '_' or '-' (it names the handout and the LMS columns)")
    cfg = ClusterConfig(path=path, course=values["course.name"], values=c, deadline=deadline, settings=values,
                        root=root, files=dict(files or {}))
    if not (cfg.grader_dir / "Makefile").is_file() or not (cfg.grader_dir / "grader").is_dir():
        raise ConfigError(f"{_where(path, 'cluster', 'grader_root')} = {c['grader_root']!r}: "
                          f"{cfg.grader_dir} is not a GEMM Lab tree (no Makefile and grader/ there)")
    overlap = c["confine_builds"] and confinement_overlap(cfg)
    if overlap:
        raise ConfigError(f"{_where(path, 'cluster', 'confine_builds')}: {overlap}")
    return cfg


# ---- what of the course's file students may read ------------------------------------------------
# Sections of course.toml that are the course staff's alone: the similarity check's thresholds (which
# would tell a student how much to change a copied kernel), the LMS export, the leaderboard and the
# extensions file. The handout's course.toml keeps the rest: the rubric, the cluster and the deadline.
STAFF_SECTIONS = ("similarity", "export", "leaderboard", "extensions")


def without_staff_sections(text: str) -> str:
    """course.toml's text without STAFF_SECTIONS: each from its [header] (and the comments right above
    it) to the next header."""
    out, skipping, pending = [], False, []
    for line in text.splitlines(keepends=True):
        header = re.match(r"\s*\[+\s*([A-Za-z0-9_-]+)", line)
        if header:
            skipping = header.group(1) in STAFF_SECTIONS
            if not skipping:
                out += pending
            pending = []
            if not skipping:
                out.append(line)
            continue
        if skipping:
            continue
        if line.lstrip().startswith("#") or not line.strip():
            pending.append(line)  # comments above a header belong to the section that follows
        else:
            out += pending + [line]
            pending = []
    return "".join(out + pending)
