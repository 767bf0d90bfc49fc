"""toolchain.py — how a hand-in is built: the trusted build of the grader (everything that does not
depend on a submission: built once per grader sources, nvcc and arch into the trusted cache, under a
lock), the object cache of compiled stage files (keyed on every input of a compile), the Makefile's
variables, the environment and logs of make, the compile limits, and which build failures are the
machine's (machine_failure: a signal, a limit of the machine, a missing tool), never the student's.

Build time is kept down by two caches, both keyed by content so they are never stale:
  * the trusted build: everything that does not depend on the submission (the Makefile's
    GRADER_TRUSTED: the grader's libraries and mains, the symbol check's list of library exports)
    and the reference library (REF_LIB),
    built once per (grader sources, nvcc, arch) into <trusted_cache>/trusted-<arch>-<hash>/ — by
    `sweep` before it queues anything, or by the first job that needs it (under a lock);
  * the object cache: each compiled stage file under the hash of its source, the compile command and
    the toolchain, kept with what its compile read (every file of its dependency list by its bytes:
    what it #includes from the hand-in too; the hand-in's file names; the bytes of its files that are
    not stage files, which an .incbin may read unlisted); reused only where all of
    that is the same, so identical files compile once per class and no grade is built from bytes
    another hand-in held.
The Makefile stays the one place that knows how to compile and link: this module asks it for its
variables (cluster/make-vars.mk), points GRADER_BUILD/REF_LIB at the trusted build, seeds objects
from the cache and lets make do the rest.

The build itself runs in node-local scratch (scratch.py): removed when the grading ends, however it
ends short of SIGKILL (scancel and time limits send SIGTERM first), and reaped by the next grading of
the same user on the node when its process is gone.
"""
import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from config import confinement_overlap
from records import iso, read_json, sha256_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader" / "scripts"))

import compile_stage  # noqa: E402  (what a machine error is)
import confine  # noqa: E402
import object_cache  # noqa: E402  (what a compile read: an object is reused only where all of it holds)


# PYTHON= spares every make call the Makefile's search for a Python with matplotlib. OBJECT_CACHE=:
# this module keeps its own object cache (per user, keyed by content; below), so the Makefile's,
# which lives in the trusted tree, is not used. REF_PTX=: every student can read the trusted build, so
# its reference library carries the reference's machine code for the course's GPU only, no PTX.
MAKE = ["make", f"PYTHON={sys.executable}", "OBJECT_CACHE=", "REF_PTX="]


class BuildError(Exception):
    def __init__(self, message, log_tail="", submission_fault=False):
        super().__init__(message)
        self.log_tail = log_tail
        self.submission_fault = submission_fault  # False: the grading set-up failed, not the student


def machine_failure(rc, build: Path, oom_kills: int = 0) -> str | None:
    """Why the machine, not the hand-in, stopped a make of this submission (exit status rc): a stage
    compile that compile_stage.py recorded as the machine's (<object>.error), make stopped by a signal
    or not found, the out-of-memory killer at work while it ran (`oom_kills`, compile_stage.oom_kills),
    or the build directory's disk full. Never what make or a tool printed: a stage file decides much of
    that (compile_stage.machine_cause). None when nothing says so."""
    causes = [f"{r.get('shown') or r.get('source')}: {r.get('cause')}"
              for r in (read_json(p) for p in sorted(build.rglob(f"*.o{compile_stage.ERROR_SUFFIX}"))) if r]
    if causes:
        return "a stage file could not be compiled, and not because of the hand-in: " + "; ".join(causes)
    if rc is not None and rc < 0:
        return f"make was stopped by signal {-rc}"
    if rc == 127:
        return "make exited 127: a program it runs was not found"
    if oom_kills:
        return (f"the build failed because of the machine: the out-of-memory killer ended {oom_kills} process(es) "
                f"on {socket.gethostname()} while it ran")
    full = compile_stage.disk_cause([build if build.is_dir() else build.parent])
    return f"the build failed because of the machine: {full}" if full else None


def compile_limits(cfg, until=0) -> "confine.Limits":
    """What each confined compile of a stage file may use: course.toml's [cells] compile_*; until: the
    time by which all the compiles of one hand-in end (confine.Limits), 0 for none."""
    return confine.Limits(*(int(cfg.setting("cells", f"compile_{k}")) for k in ("cpu_seconds", "wall_seconds",
                                                                                  "memory_mb", "file_mb")), until=until)


# The longest a grading waits for another grading's compile of a file both hold (Toolchain._compiling):
# a stage file compiles in well under a minute; the other grading's make may hold the lock for all of
# its own compiles (a hand-in of files that never end), and no one's compile waits on that.
LOCK_WAIT_SECONDS = 120


def jobs() -> int:
    return int(os.environ.get("SLURM_CPUS_PER_TASK") or min(os.cpu_count() or 1, 8))


def make_vars(root: Path, build: Path | None, submission: Path, arch: str, extra=()) -> dict:
    """The Makefile's paths and flags for this build directory (None: the Makefile's own), submission
    and architecture ("": the Makefile's own); extra: more variables (CONFINE=...)."""
    cmd = [*MAKE, "-s", "--no-print-directory", "-f", "Makefile", "-f",
           str(Path(__file__).resolve().parent / "make-vars.mk"),
           *([f"BUILD={build}"] if build is not None else []), f"SUBMISSION={submission}", *extra,
           "print-cluster-vars"]
    if arch:
        cmd.insert(-1, f"ARCH={arch}")
    try:
        r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=clean_env())
    except OSError as e:  # no make on this node: the machine's
        raise BuildError(f"{cmd[0]} could not be started on {socket.gethostname()}: {e.strerror}") from None
    if r.returncode != 0:
        raise BuildError(f"could not read the Makefile's variables in {root}: {r.stderr.strip()}")
    return dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)


def nvcc_version(nvcc: str) -> str:
    try:
        return subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError:
        raise BuildError(f"nvcc not found ({nvcc}): load the CUDA toolkit (e.g. `module load cuda`)") from None


def grader_tree_digest(root: Path) -> str:
    """Hash of everything in the trusted tree that goes into a grader build."""
    h = hashlib.sha256()
    paths = [root / "Makefile"]
    for sub in ("grader/include", "grader/src", "reference"):
        paths += sorted(p for p in (root / sub).rglob("*") if p.is_file())
    for p in paths:
        if p.exists():
            h.update(str(p.relative_to(root)).encode() + b"\0" + sha256_file(p).encode())
    return h.hexdigest()


def trusted_tree_digest(cfg) -> str:
    """grader_tree_digest of the trusted tree as the staff read it. A student cannot read the reference
    solutions' sources: their commands and feedback jobs take the digest the course state published
    (computed by the staff from the same tree), so they find the trusted build the staff made."""
    try:
        return grader_tree_digest(cfg.grader_dir)
    except PermissionError as e:
        state = getattr(cfg, "state", None)
        published = ((state.info.get("grader") or {}).get("tree") if state is not None else None)
        if published:
            return published
        raise BuildError(f"{e.filename}: cannot read it, and no published course state names the trusted build: "
                         "the course staff publish the course (`make publish-course`), which builds it") from None


def private_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gemmlab"


def _writable_dir(d: Path, public=False) -> bool:
    """d exists (made if need be) and this user may write it. public: everyone may read it (the
    trusted build; never the object cache, which holds compiled student code). Below this user's own
    cache (private_cache) every directory is this user's alone (0700, whatever the umask): a classmate
    in the same group lists nothing of it."""
    try:
        if not d.exists():
            d.mkdir(parents=True)
            if public:
                os.chmod(d, 0o755)
        mine = private_cache()
        if not public and (d == mine or mine in d.parents):
            for p in [mine, *reversed([q for q in d.parents if mine in q.parents]), d]:
                if p.stat().st_uid == os.getuid():
                    os.chmod(p, 0o700)
    except OSError:
        return False
    return os.access(d, os.W_OK | os.X_OK)


def cache_dirs(cfg) -> list[Path]:
    """Staff cache first (read by everyone, written by staff), then this user's own."""
    return [cfg.trusted_cache_dir, private_cache()]


def compiler_cache_env(env=None) -> dict:
    """The environment of a make call: the Makefile's compiler cache (ccache) uses this user's own
    cache directory (ccache's default), or is turned off where that cannot be written."""
    env = dict(os.environ if env is None else env)
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = Path(env.get("CCACHE_DIR") or os.path.join(base, "ccache"))  # ccache's own default
    if not _writable_dir(d):
        env["CCACHE_DISABLE"] = "1"
    return env


# What a make that started this tool (`make submit`) leaves in the environment: a make of our own starts
# afresh (else it warns "-jN forced in submake: resetting jobserver mode"), and a grader it runs names
# its own command in a no-GPU message, not the student's.
MAKE_STATE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GEMMLAB_COMMAND")


def clean_env(env=None) -> dict:
    """The environment of a make call or grader run: the compiler cache set up (compiler_cache_env),
    nothing of an outer make's state."""
    return {k: v for k, v in compiler_cache_env(env).items() if k not in MAKE_STATE}


def run_logged(cmd, cwd, log, env=None) -> int:
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n")
        f.flush()
        try:
            return subprocess.run(list(map(str, cmd)), cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                  env=clean_env(env)).returncode
        except OSError as e:  # make itself missing: the machine's
            raise BuildError(f"{cmd[0]} could not be started on {socket.gethostname()}: {e.strerror}") from None


def run_streamed(cmd, cwd, log, on_line) -> int:
    """run_logged, and each line of the output also handed to on_line as it comes."""
    with open(log, "a") as f:
        f.write(f"$ {' '.join(map(str, cmd))}\n")
        f.flush()
        try:
            proc = subprocess.Popen(list(map(str, cmd)), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, errors="replace", env=clean_env())
        except OSError as e:
            raise BuildError(f"{cmd[0]} could not be started on {socket.gethostname()}: {e.strerror}") from None
        for line in proc.stdout:
            f.write(line)
            f.flush()
            on_line(line)
        return proc.wait()


def tail(path: Path, lines=40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


KEEP_TRUSTED_BUILDS = 3  # older ones (grader sources since changed) are removed


def _prune_trusted(cache: Path, keep: int):
    """Remove all but the `keep` newest trusted builds (each is ~100 MB). One in use by a running
    job a few builds back would be gone: that job ends in `error` and the next sweep retries it."""
    builds = sorted(cache.glob("trusted-*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in builds[keep:]:
        for p in [old, *old.rglob("*")]:
            if p.is_dir():
                os.chmod(p, 0o755)
        shutil.rmtree(old, ignore_errors=True)
        (cache / f".lock-{old.name}").unlink(missing_ok=True)


class Toolchain:
    """The trusted tree, its Makefile's flags, and the key every cached build is filed under."""

    def __init__(self, cfg, say=print):
        self.cfg, self.root, self.say = cfg, cfg.grader_dir, say
        probe = make_vars(self.root, Path("/nonexistent-build"), Path("/nonexistent-submission"), cfg.arch)
        self.arch = probe["ARCH"]
        self.nvcc = probe["NVCC"]
        self.tree = trusted_tree_digest(cfg)
        self.key = hashlib.sha256("\0".join([
            self.tree, nvcc_version(self.nvcc), self.arch, probe["NVCCFLAGS"], probe["REF_NVCCFLAGS"], probe["CXXFLAGS"],
        ]).encode()).hexdigest()
        self.name = f"trusted-{self.arch}-{self.key[:16]}"
        self.cuda_home = Path(self.nvcc).resolve().parents[1]

    # ---- the confinement of each stage compile (grader/scripts/confine.py) -----------------------
    def confinement(self, submission: Path, starts=False) -> list[str]:
        """The make variables that confine each stage compile of `submission` to what it may read:
        the hand-in's scratch copy, the stage API headers (grader/include, never the rest of the
        trusted tree), the CUDA toolkit, a host compiler installed outside the system's directories
        (and the system compiler's files, confine.py), and to the course's compile limits
        (compile_limits; starts: the hand-in's compiles start now, and together end within
        compile_wall_seconds); [] where the course turned it off. BuildError, the machine's, where it
        cannot be confined: never compiled unconfined instead."""
        if not self.cfg.confine_builds:
            return []
        reads = [self.cuda_home, *confine.host_compiler_home()]
        overlap = confinement_overlap(self.cfg, reads)
        if overlap:
            raise BuildError(f"{self.cfg.source}: [cluster] confine_builds: {overlap}")
        try:
            confine.abi()
        except confine.Unavailable as e:
            raise BuildError(f"{e}. This course compiles every hand-in confined ([cluster] confine_builds = true "
                             f"in {self.cfg.source}) and compiles none without it: grade on nodes whose kernel "
                             "has Landlock, or set confine_builds = false to compile unconfined") from None
        limits = compile_limits(self.cfg)
        until = int(time.time()) + limits.wall_seconds if starts else 0
        return ["CONFINE=" + ":".join(map(str, [submission, self.root / "grader" / "include", *reads])),
                f"CONFINE_LIMITS={compile_limits(self.cfg, until)}"]

    # ---- the trusted build ------------------------------------------------------------------
    def find_trusted(self) -> Path | None:
        for d in cache_dirs(self.cfg):
            if (d / self.name / "COMPLETE").is_file():
                return d / self.name
        return None

    def trusted(self, log: Path) -> Path:
        """The trusted grader/reference libraries, built once per key (under a lock)."""
        found = self.find_trusted()
        if found:
            return found
        for d in cache_dirs(self.cfg):
            if _writable_dir(d, public=True):
                break
        else:
            raise BuildError(f"no writable cache for the grader build (tried {', '.join(map(str, cache_dirs(self.cfg)))})")
        with open(d / f".lock-{self.name}", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait, then find it built
            if (d / self.name / "COMPLETE").is_file():
                return d / self.name
            for stale in d.glob(f".tmp-{self.name}-*"):  # left by a killed build (we hold the lock)
                shutil.rmtree(stale, ignore_errors=True)
            tmp = d / f".tmp-{self.name}-{os.getpid()}"
            v = make_vars(self.root, tmp, Path("/nonexistent-submission"), self.arch)
            targets = v["GRADER_TRUSTED"].split() + ([v["REF_LIB"]] if v["REF_LIB"].startswith(str(tmp)) else [])
            self.say(f"building the trusted grader libraries once ({self.arch}) into {d / self.name} ...")
            t0 = time.time()
            try:
                rc = run_logged([*MAKE, f"-j{jobs()}", f"BUILD={tmp}", f"ARCH={self.arch}", *targets], self.root, log)
            except BaseException:  # stopped (scratch.Stopped): leave no half build behind
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            if rc != 0:
                shutil.rmtree(tmp, ignore_errors=True)
                raise BuildError(f"the trusted grader does not build (make exit {rc}); see {log}", tail(log))
            (tmp / "COMPLETE").write_text(json.dumps({"key": self.key, "arch": self.arch, "built": iso(
                dt.datetime.now(dt.timezone.utc)), "seconds": round(time.time() - t0, 1),
                "libs": [str(Path(t).relative_to(tmp)) for t in targets]}) + "\n")
            # Everyone reads the trusted build, and runs what its builder may run (a student's feedback
            # grading runs its gemmlab-config): the staff's umask 007 gives others neither.
            for p in [tmp, *tmp.rglob("*")]:
                mode = p.stat().st_mode
                runs = p.is_dir() or mode & 0o100
                os.chmod(p, (mode | 0o444 | (0o111 if runs else 0)) & ~0o222)
            os.rename(tmp, d / self.name)
            self.say(f"trusted grader built in {time.time() - t0:.0f} s")
            _prune_trusted(d, keep=KEEP_TRUSTED_BUILDS)
            return d / self.name

    def config_checker(self, trusted: Path) -> Path:
        """gemmlab-config of a trusted build: the grader's own check of [bench] and [scoring]."""
        return Path(make_vars(self.root, trusted, Path("/nonexistent-submission"), self.arch)["CONFIG_CHECKER"])

    # ---- the object cache -------------------------------------------------------------------
    def object_cache(self) -> Path:
        for d in cache_dirs(self.cfg):
            if _writable_dir(d / "objects"):
                return d / "objects"
        raise BuildError("no writable object cache")

    def _object_keys(self, v: dict, submission: Path) -> dict[Path, str]:
        """Each stage object's key in the object cache: the toolchain, the compile command (the
        Makefile's SUB_FLAGS, confinement included, the hand-in's own scratch path left out), the stage
        file's name and bytes. Under its key an object is kept with what its compile read
        (object_cache.keep: its dependency list, every file by its bytes, and the hand-in's file names),
        and reused only where all of that holds for this hand-in: a stage file that #includes another
        file of the hand-in never gets an object built from another hand-in's copy of that file. An
        object compiled unconfined is never reused by a confined build (the command differs), nor the
        other way round."""
        sub_build = Path(v["SUB_BUILD"])
        command = v["SUB_FLAGS"].replace(str(submission), "<hand-in>")
        return {sub_build / "stages" / f"{src.stem}.o":
                hashlib.sha256(f"{self.key} {command} stage {src.name} {sha256_file(src)}".encode()).hexdigest()
                for src in sorted(submission.glob("*.cu"))}

    @staticmethod
    def _source(obj: Path, submission: Path) -> Path:
        return submission / f"{obj.stem}.cu"

    def _seed(self, v: dict, keys: dict[Path, str], submission: Path):
        """Copy cached objects into place so make keeps them: first the stamp of the flags they were
        compiled with (the Makefile's SUB_FLAGS_STAMP, which the objects depend on), then the objects,
        each newer than the stamp and than its source (copied in before). No time is set in the
        future: make would say "Clock skew detected"."""
        stamp = Path(v["SUB_FLAGS_STAMP"])
        stamp.parent.mkdir(parents=True, exist_ok=True)
        if not stamp.is_file() or stamp.read_text() != v["SUB_FLAGS"] + "\n":
            stamp.write_text(v["SUB_FLAGS"] + "\n")
        before = time.time() - 2
        os.utime(stamp, (before, before))
        for obj, key in keys.items():
            for cache in [d / "objects" for d in cache_dirs(self.cfg)]:
                try:
                    hit = object_cache.find(cache, key, self._source(obj, submission))
                    if not hit:
                        continue
                    obj.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(hit[0], obj)
                except OSError:  # another user's cache (compiled student code)
                    continue
                os.utime(obj)  # now: after the source was copied in and after the stamp
                break

    @contextlib.contextmanager
    def _compiling(self, v: dict, keys: dict[Path, str], submission: Path):
        """Held while make compiles the objects that were not in the cache: a lock per missing object
        in the object cache, taken in sorted order (two gradings never each hold what the other waits for). A sweep starts
        many gradings at once, and a class hands in the same files many times: the first grading of a
        file compiles it, the others with the same file wait for it and copy its object (seeded again
        once the locks are theirs) instead of compiling it at the same time. Nothing is locked where
        there is no object cache to write."""
        missing = sorted({key for obj, key in keys.items() if not obj.is_file()})
        try:
            cache = self.object_cache()
        except BuildError:
            missing = []
        # The other grading holds its locks for all of its make: a wait has an end (LOCK_WAIT_SECONDS),
        # after which this grading compiles what it waited for itself.
        give_up = time.monotonic() + LOCK_WAIT_SECONDS
        with contextlib.ExitStack() as held:  # the lock files stay (one per object, empty): removing
            for key in missing:               # one while another grading waits on it would let a third in
                try:
                    lock = held.enter_context(open(cache / f"{key}.lock", "w"))
                except OSError:
                    continue
                _lock_by(lock, give_up)
            if missing:  # all of them again: each object newer than the stamp _seed writes anew
                self._seed(v, keys, submission)
            yield

    def _store(self, keys: dict[Path, str], submission: Path):
        """Keep each object this make compiled, with what its compile read: the dependency list it wrote
        beside it (-MMD's <object>.d, paths relative to the trusted tree, where make runs), and every file
        of the hand-in that is not a stage file of the course (student/*.cu, the drop box's whitelist) by
        its bytes. A compile reads those without its dependency list saying so where an asm statement
        .incbin's a name built from __FILE__ ("tiled.cu" then ".cu": an extra file tiled.cu.cu); it cannot
        build a stage file's name from another's. Only a hand-in made by hand holds such files. An object
        with none (one seeded from the cache) is not kept again: what its compile read is not known here."""
        cache = self.object_cache()
        stage_names = {p.name for p in (self.root / "student").glob("*.cu")}
        extra = [str(p) for p in sorted(submission.iterdir()) if p.name not in stage_names]
        for obj, key in keys.items():
            depends = obj.with_suffix(".d")
            if obj.is_file() and depends.is_file():
                object_cache.keep(cache, key, obj, self._source(obj, submission), depends, cwd=self.root, also=extra)

    def compile_only(self, submission: Path, build: Path, log: Path, on_line=None) -> list[str]:
        """Compile each stage file as the Makefile does; returns the names that do not compile.
        on_line: called with each line make prints (compile_stage.py's "  NVCC    <file>" as each
        compile starts; every line also goes to the log)."""
        confined = self.confinement(submission)
        v = make_vars(self.root, build, submission, self.arch, confined)
        keys = self._object_keys(v, submission)
        stage_objs = {obj: k for obj, k in keys.items() if obj.parent.name == "stages"}
        self._seed(v, stage_objs, submission)
        oom_before = compile_stage.oom_kills()
        with self._compiling(v, stage_objs, submission):
            cmd = [*MAKE, "-s", "--no-print-directory", "-k", f"-j{jobs()}", f"BUILD={build}",
                   f"SUBMISSION={submission}", f"ARCH={self.arch}", *self.confinement(submission, starts=True),
                   *stage_objs]
            if on_line is None:
                rc = run_logged(cmd, self.root, log)
            else:
                rc = run_streamed(cmd, self.root, log, on_line)
            self._store(stage_objs, submission)
        broken = sorted(f"{obj.stem}.cu" for obj in stage_objs if not obj.is_file())
        machine = rc != 0 and machine_failure(rc, build, compile_stage.oom_kills() - oom_before)
        if machine:
            raise BuildError(machine, tail(log))
        return broken

    def build(self, submission: Path, build: Path, log: Path) -> Path:
        """The gemmlab binary of this submission, linked against the trusted libraries."""
        confined = self.confinement(submission)
        trusted = self.trusted(log)
        tv = make_vars(self.root, trusted, submission, self.arch)
        v = make_vars(self.root, build, submission, self.arch, confined)
        keys = self._object_keys(v, submission)
        self._seed(v, keys, submission)
        libs = [f"GRADER_BUILD={tv['GRADER_BUILD']}", f"REF_LIB={tv['REF_LIB']}"]
        keep = [x for f in [*tv["GRADER_TRUSTED"].split(), tv["REF_LIB"]] for x in ("-o", f)]  # never rebuilt
        # The tensor-core rule's reading of each stage object is kept beside the cached objects (the
        # Makefile's SCAN_CACHE): a class hands in the same files many times.
        try:
            scan_cache = [f"SCAN_CACHE={self.object_cache()}"]
        except BuildError:
            scan_cache = []
        oom_before = compile_stage.oom_kills()
        with self._compiling(v, keys, submission):  # the hand-in's compiles start once no other grading holds them
            rc = run_logged([*MAKE, "-k", f"-j{jobs()}", *keep, f"BUILD={build}", f"SUBMISSION={submission}",
                             f"ARCH={self.arch}", *self.confinement(submission, starts=True), *libs, *scan_cache,
                             v["GRADER"]], self.root, log)
            self._store(keys, submission)
        # A stage file that does not compile or link is left out of the submission's library by the
        # build itself (its stages are `rejected`, the others graded): only a build that produced no
        # grader at all is a build failure, and the student's only where the machine did not stop it.
        if rc == 0 and Path(v["GRADER"]).is_file():
            return Path(v["GRADER"])
        lost = [t for t in [*tv["GRADER_TRUSTED"].split(), tv["REF_LIB"]] if not Path(t).exists()]
        machine = machine_failure(rc, build, compile_stage.oom_kills() - oom_before) or (lost and (
            f"the trusted grader build {trusted} lost {len(lost)} of its files while this grading used it "
            f"(e.g. {lost[0]}; a newer build pruned it?)"))
        if machine:
            raise BuildError(machine, tail(log))
        raise BuildError("the submission does not build: no grader could be linked with it (see build.log)",
                         tail(log), submission_fault=True)


def _lock_by(lock, give_up: float) -> bool:
    """An exclusive lock on the open file `lock`, waited for until time.monotonic() reaches give_up;
    whether it was had."""
    pause = 0.01
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= give_up:
                return False
            time.sleep(pause)
            pause = min(2 * pause, 0.5)


def _has_grade_command(grader: Path) -> bool:
    r = subprocess.run([str(grader), "--help"], capture_output=True, text=True)
    return any(line.split()[:1] == ["grade"] for line in r.stdout.splitlines())


def _grade_takes_fingerprint(grader: Path) -> bool:
    r = subprocess.run([str(grader), "grade", "--help"], capture_output=True, text=True)
    return "--fingerprint" in r.stdout + r.stderr


def confinement_note(cfg) -> str:
    """How this grading compiles the hand-in, for its outcome: confined, or not (and by which setting)."""
    if not cfg.confine_builds:
        return ("off ([cluster] confine_builds = false): the stage files were compiled unconfined, able to read "
                "any file the grading account can")
    try:
        return f"on (Linux Landlock ABI {confine.abi()}): the compiler could read only the hand-in, the stage API, " \
               "the CUDA toolkit and the system compiler"
    except confine.Unavailable as e:
        return f"required, and unavailable here: {e}"
