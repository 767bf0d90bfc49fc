#!/usr/bin/env python3
"""Builds and checks the student handout of a GEMM Lab course (instructors only).

    handout.py build --config course.toml    dist/<course>-handout/ and dist/<course>-handout.tar.gz
    handout.py check --config course.toml    unpack that tarball afresh and prove it is fit to hand out

`make handout` and `make handout-check` call these. What ships, what never ships and how the
reference solutions are compiled into reference/lib/libgemmlab_reference.a is explained in
docs/handout.md; course.toml [handout] holds the course's choices (GPU archs, docs, exclusions).
Standard library (Python 3.11+: tomllib), the staff's similarity measure (cluster/staff/similarity.py,
with copydetect and matplotlib: make setup installs them), and the toolchain: nvcc, g++, ld, objcopy, ar,
nm, c++filt, strings, readelf, make.
"""
import argparse
import difflib
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
import tomllib
from datetime import datetime, timezone
from pathlib import Path
from string import Template

# The tool's parts, beside its templates in handout/ (which never ships): the bottom layer, what ships,
# the compiled reference and the check's checks. The names the tests and the cluster tool use are this
# module's too.
TEMPLATES = Path(__file__).resolve().parent / "handout"
sys.path.insert(0, str(TEMPLATES))
from handout_base import (MANIFEST, ROOT, HandoutError, clean_env, cuda_home, normalize, run,  # noqa: E402,F401
                          say)
from handout_files import (NEVER, OUTPUTS, SHIP, SOLUTIONS, STAFF_SECTIONS, THIRD_PARTY,  # noqa: E402,F401
                           copy_third_party, matches, select_files, without_staff_sections)
from handout_library import (REF_LIB, arch_number, build_reference_library, gencode_flags,  # noqa: E402,F401
                             global_symbols, library_symbol_names)
from handout_checks import (TESTED_HERE, TESTED_HERE_READS, Report, broken_links, check_archs,  # noqa: E402,F401
                            check_contents, check_grading, check_no_solution_text, check_tuning_names,
                            distinctive_reference_lines, safe_extract, same_report_tests, solution_error,
                            solution_matches)

import shared_dropbox  # noqa: E402  (cluster/, on the path through handout_files: what a drop box the staff can read is)
from fingerprint import sha256_file as sha256  # noqa: E402  (grader/scripts: the one file hasher)
import config as course_config  # noqa: E402  (how the course shows a moment: UTC and the course's time)

# A copy of the stubs as handed out, which the handout's `make test` builds and its tests break (the
# Makefile's TEST_STUBS; tests/py/support/paths.py's STUBS): student/ becomes the student's own work, and
# the grader's tests must pass whatever it holds.
STUBS_COPY = "tests/stubs/student"
# The stage a student has written, as `handout check` writes it into the unpacked handout's student/
# before running its tests: a working kernel must not turn the grader's tests red.
WRITTEN_STAGE = "tiled.cu"
MANIFEST_SCHEMA = "gemmlab.handout/1"

DEFAULT_DOCS = ["student-guide.md", "student-tools.md", "correctness.md", "timing.md", "scoring.md",
                "results-schema.md"]


# ---- configuration ---------------------------------------------------------------------------------

HANDOUT_KEYS = ("archs", "ptx", "dist", "docs", "exclude")


def load_config(path):
    path = Path(path)
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise HandoutError(f"{path}: no such file (pass --config)")
    except tomllib.TOMLDecodeError as e:
        raise HandoutError(f"{path}: not valid TOML: {e}")
    course = cfg.get("course", {})
    h = cfg.get("handout", {})
    for unknown in [k for k in h if k not in HANDOUT_KEYS]:
        close = difflib.get_close_matches(unknown, HANDOUT_KEYS, n=1)
        raise HandoutError(f"{path}: [handout] {unknown}: unknown key"
                           + (f" (did you mean {close[0]!r}?)" if close else f"; the keys are: {', '.join(HANDOUT_KEYS)}"))

    def key(table, name, default, kind):
        value = table.get(name, default)
        if not isinstance(value, kind):
            raise HandoutError(f"{path}: [{'handout' if table is h else 'course'}] {name} = {value!r}: "
                               f"expected {kind.__name__ if isinstance(kind, type) else 'list'}")
        return value

    name = key(course, "name", "gemm-lab", str)
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise HandoutError(f"{path}: [course] name = {name!r}: use letters, digits, '.', '_' or '-' "
                           "(it names the handout directory)")
    archs = key(h, "archs", ["sm_90", "sm_80"], list)
    if not archs or not all(isinstance(a, str) and re.fullmatch(r"sm_\d{2,3}[af]?", a) for a in archs):
        raise HandoutError(f"{path}: [handout] archs = {archs!r}: expected a list like [\"sm_90\", \"sm_80\"]")
    docs = key(h, "docs", DEFAULT_DOCS, list)
    exclude = key(h, "exclude", [], list)
    for listed, what in ((docs, "docs"), (exclude, "exclude")):
        if not all(isinstance(x, str) for x in listed):
            raise HandoutError(f"{path}: [handout] {what}: expected a list of strings")
    dist = Path(key(h, "dist", "dist", str))
    return {
        "path": path.resolve(),
        "name": name,
        "title": course.get("title", name),
        "archs": archs,
        "ptx": bool(h.get("ptx", False)),
        "docs": docs,
        "exclude": exclude,
        "dist": dist if dist.is_absolute() else ROOT / dist,
        "deadline": cfg.get("deadline", {}).get("due", ""),
        "cluster": cfg.get("cluster", {}),
        "similarity": cfg.get("similarity", {}),
    }


def handout_paths(cfg, dist_override=None):
    dist = Path(dist_override).resolve() if dist_override else cfg["dist"]
    base = f"{cfg['name']}-handout"
    return dist, dist / base, dist / f"{base}.tar.gz"


# ---- build ---------------------------------------------------------------------------------------

def similarity_settings(cfg):
    """The course's [similarity] over the defaults, as make similarity reads them."""
    return {k: cfg["similarity"].get(k, default) for (section, k), (default, _) in course_config.DEFAULTS.items()
            if section == "similarity"}


def render_readme(cfg, created, archs_text):
    # the course's [cluster] over the defaults, as every tool of the course reads it
    cluster = {k: default for (section, k), (default, _) in course_config.DEFAULTS.items() if section == "cluster"}
    srun = course_config.srun_line({**cluster, **cfg["cluster"]})
    extra = []
    if cfg["deadline"]:
        due = course_config.parse_when(cfg["deadline"])
        shown = course_config.course_time(due, course_config.course_zone({"deadline": {"due": cfg["deadline"]}}))
        extra.append(f"- Deadline: **{shown}** (hand in with `make submit`; `make status` shows yours).")
    template = Template((TEMPLATES / "README.md.in").read_text())
    return template.substitute(
        title=cfg["title"], name=cfg["name"],
        gpu_hint=f" (on the cluster: {srun} make check)",
        extra_lines="\n".join(extra) + ("\n" if extra else ""),
        created=created, archs=archs_text)


# ---- build: where the students' hand-ins go ---------------------------------------------------------

def dropbox_check(cfg):
    """The course's drop box, as the handout's `make submit` will find it: a HandoutError where it can
    never be a shared location (relative, or inside this repository: every student's `make submit`
    would refuse to hand in), else the loud warning to print when the staff have not set it up yet
    ('' when they have). cluster/shared_dropbox.py says what a shared location is."""
    raw = cfg["cluster"].get("dropbox") or "results/dropbox"
    where = shared_dropbox.where_problem(raw, cfg["path"], ROOT)
    if where:
        raise HandoutError(
            f"{cfg['path']}: {where}. A handout with it could hand nothing in: every student's `make submit` "
            "would refuse, since the course staff could never read what it stored. Set [cluster] dropbox to an "
            "absolute path on the cluster's shared file system (e.g. /srv/gemmlab/2026-dropbox), create it with\n"
            f"      python3 cluster/gemmlab_cluster.py --config {cfg['path']} setup\n"
            "  and run make handout again (docs/handout.md, \"Where hand-ins go\").")
    box = shared_dropbox.configured(raw, cfg["path"])
    problem = shared_dropbox.setup_problem(box)
    if not problem:
        return ""
    return (f"{problem}. Until the course staff run, on the cluster,\n"
            f"      python3 cluster/gemmlab_cluster.py --config {cfg['path']} setup\n"
            f"  every student's `make submit` refuses to hand in (it stores only in a drop box set up by the staff).")


def loud(warning):
    bar = "!" * 100
    for line in [bar, *f"WARNING: {warning}".splitlines(), bar]:
        say(line)


def write_tree(cfg, out):
    """The handout's files in `out` (which must not exist): what ships from the repository, the
    course's course.toml without the staff's sections, and the README. The compiled reference
    library and HANDOUT.json are build()'s. Returns the files written, relative to `out`."""
    files, left_out = select_files(cfg)
    for rel, why in left_out:
        say(f"left out {rel}: {why}")
    out.mkdir(parents=True)
    for rel in files:
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, dst)
    # The course.toml the handout was made with (--config; make handout CONFIG=...), less the staff's sections.
    (out / "course.toml").write_text(without_staff_sections(cfg["path"].read_text()))
    created = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    archs_text = ", ".join(cfg["archs"]) + (f" (+ PTX for newer GPUs)" if cfg["ptx"] else "")
    (out / "README.md").write_text(render_readme(cfg, created, archs_text))
    stubs = [f"{STUBS_COPY}/{Path(rel).name}" for rel in files if rel.startswith("student/") and rel.endswith(".cu")]
    for rel in stubs:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(out / "student" / Path(rel).name, out / rel)
    return sorted({*files, *stubs, *copy_third_party(out), "course.toml", "README.md"}), created


def build(cfg, dist_override=None, object_cache_dir=None, ccache=""):
    t0 = time.monotonic()
    dist, out, tarball = handout_paths(cfg, dist_override)
    not_set_up = dropbox_check(cfg)  # before anything is written: a drop box that can never work stops here
    if not_set_up:
        loud(not_set_up)
    if out.exists():
        if not (out / MANIFEST).exists() and any(out.iterdir()):
            raise HandoutError(f"{out} exists and is not a handout (no {MANIFEST}): move it away first")
        shutil.rmtree(out)
    files, created = write_tree(cfg, out)
    settings = similarity_settings(cfg)
    solutions = solution_matches(out, files, settings)
    if solutions:
        shutil.rmtree(out)
        raise solution_error(solutions, settings["report_threshold"])
    say(f"no shipped file holds a solution (the staff's similarity measure, below {settings['report_threshold']:.0%})")
    with tempfile.TemporaryDirectory(prefix="gemmlab-handout-ref-") as work:
        nvcc_version = build_reference_library(cfg, out / REF_LIB, Path(work), object_cache_dir, ccache)

    listed = sorted([*files, REF_LIB])
    manifest = {
        "schema": MANIFEST_SCHEMA,
        "course": cfg["name"],
        "created": created,
        "nvcc": nvcc_version,
        "archs": cfg["archs"],
        "ptx": cfg["ptx"],
        "files": {rel: sha256(out / rel) for rel in listed},
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")

    stamp = int(time.time())
    tmp = tarball.with_suffix(".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for rel in sorted([*listed, MANIFEST]):
            info = tar.gettarinfo(str(out / rel), arcname=f"{out.name}/{rel}")
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = stamp
            info.mode = 0o755 if os.access(out / rel, os.X_OK) else 0o644
            with open(out / rel, "rb") as f:
                tar.addfile(info, f)
    os.replace(tmp, tarball)
    size_kb = tarball.stat().st_size // 1024
    say(f"wrote {out}/ ({len(listed) + 1} files) and {tarball} ({size_kb} KiB) in {time.monotonic() - t0:.0f} s")
    if not_set_up:
        loud(not_set_up)  # again, where the instructor looks last
    else:
        say(f"hand-ins go to the drop box {shared_dropbox.configured(cfg['cluster'].get('dropbox'), cfg['path'])}, "
            "set up by the course staff")
    return out, tarball


# ---- check ---------------------------------------------------------------------------------------

def check(cfg, dist_override=None, keep=False, no_gpu=False, object_cache_dir=None, tested_here=False):
    t0 = time.monotonic()
    _, _, tarball = handout_paths(cfg, dist_override)
    if not tarball.exists():
        raise HandoutError(f"{tarball} does not exist: run `make handout` first")
    scratch = Path(tempfile.mkdtemp(prefix=f"{cfg['name']}-handout-check-"))
    log = scratch / "handout-check.log"
    say(f"unpacking {tarball.name} into {scratch}")
    with tarfile.open(tarball) as tar:
        tops = {m.name.split("/", 1)[0] for m in tar.getmembers()}
        safe_extract(tar, scratch)
    rep = Report()
    if len(tops) != 1:
        rep.fail("one top-level directory", ", ".join(sorted(tops)))
        tree = scratch
    else:
        tree = scratch / tops.pop()
        rep.ok("one top-level directory", tree.name)
    manifest = json.loads((tree / MANIFEST).read_text()) if (tree / MANIFEST).exists() else {"files": {}, "archs": cfg["archs"]}

    check_contents(rep, tree, cfg, manifest)
    check_no_solution_text(rep, tree)
    check_archs(rep, tree, manifest)
    check_tuning_names(rep, tree)

    env = clean_env()
    if object_cache_dir is not None:
        # The handout's builds share this tree's stage object cache: an object is reused only for the
        # same source, headers and command (the handout's stage API headers are byte for byte this
        # tree's), so what the check proves is unchanged; its stubs and its tests' submissions are
        # compiled once, here or there. Empty: none (every stage file compiled afresh).
        env["OBJECT_CACHE"] = str(Path(object_cache_dir).resolve()) if object_cache_dir else ""
    if no_gpu:  # the CUDA runtime sees no device; the tests skip (and count) their GPU tests
        env.update(CUDA_VISIBLE_DEVICES="", GEMMLAB_TESTS_NO_GPU="1")
    left_out = ""
    if tested_here:
        differs = same_report_tests(tree)
        if differs:
            rep.ok("the report's tests run in the handout too", f"its {differs} differs from this checkout's")
        else:
            env["PYTEST_ADDOPTS"] = " ".join([env.get("PYTEST_ADDOPTS", ""), *(f"--ignore={t}" for t in TESTED_HERE)]).strip()
            left_out = (f"; left out: {', '.join(Path(t).name for t in TESTED_HERE)} (the same files, and the same "
                        f"files they read, as this checkout's, whose suite runs them)")
    jobs = os.environ.get("HANDOUT_JOBS", str(os.cpu_count() or 2))
    written = tree / "student" / WRITTEN_STAGE
    stub = written.read_bytes() if written.is_file() else None
    for target, what in ((["-j", jobs], "it builds (make)"),
                         (["-j", jobs, "test"], f"its tests pass once a student has written a stage (make test, "
                                                f"with reference/{WRITTEN_STAGE} in student/)")):
        t = time.monotonic()
        if target[-1] == "test" and stub is not None:
            shutil.copy2(ROOT / "reference" / WRITTEN_STAGE, written)
        try:
            proc = run(["make", *target], cwd=tree, env=env, log=log, check=False)
        finally:
            if stub is not None:
                written.write_bytes(stub)
        secs = time.monotonic() - t
        if proc.returncode == 0:
            summary = proc.stdout.strip().splitlines()[-1] if target[-1] == "test" else ""
            rep.ok(what, f"{summary} ({secs:.0f} s){left_out if target[-1] == 'test' else ''}".strip())
        else:
            lines = proc.stdout.splitlines()
            # the failures by name and their assertion lines first (they may lie far above the tail), then the tail
            named = [ln for ln in lines if ln.startswith(("FAILED ", "ERROR ")) or ln.lstrip().startswith("E  ")][:40]
            tail = "\n        ".join(named + ["..."] * bool(named) + lines[-15:])
            rep.fail(what, f"exit {proc.returncode} after {secs:.0f} s; last lines:\n        {tail}")
            break
    else:
        check_grading(rep, tree, env, log, no_gpu)

    total = time.monotonic() - t0
    if rep.failed:
        say(f"FAILED: {len(rep.failed)} check(s) ({total:.0f} s); the unpacked handout and its log stay in {scratch}")
        return 1
    warns = sum(1 for r in rep.rows if r[0] == "warn")
    say(f"ok: the handout is fit to hand out ({total:.0f} s" + (f", {warns} warning(s)" if warns else "") + ")")
    if keep:
        say(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name, help_ in (("build", "build the handout directory and tarball"),
                        ("check", "unpack the tarball afresh and check it")):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--config", default="course.toml", help="the course configuration (course.toml)")
        p.add_argument("--dist", help="output directory (default: course.toml [handout] dist)")
        if name == "build":
            p.add_argument("--object-cache", default=str(ROOT / "build" / "object-cache"),
                           help="where compiled reference objects are kept and reused (the Makefile's "
                                "OBJECT_CACHE; empty: compile every one afresh)")
            p.add_argument("--ccache", default=shutil.which("ccache") or "",
                           help="compiler cache to run nvcc through (the Makefile's CCACHE; empty: none)")
        if name == "check":
            p.add_argument("--object-cache", default=None,
                           help="the stage object cache the unpacked handout's builds share (the Makefile's "
                                "OBJECT_CACHE; empty: none; not given: the handout's own, build/object-cache)")
            p.add_argument("--keep", action="store_true", help="keep the unpacked handout")
            p.add_argument("--tested-here", action="store_true",
                           help="leave the lab report's tests out of the handout's `make test` where they and "
                                "everything they read are byte for byte this checkout's: what the repository's "
                                "own suite does, which runs them here")
            p.add_argument("--no-gpu", action="store_true",
                           help="check as on a machine without a GPU (the GPU is hidden from the handout's "
                                "build, tests and grading): what the test suite does, whose own GPU tests "
                                "grade inside an unpacked handout")
    args = ap.parse_args()
    try:
        cfg = load_config(args.config)
        if args.command == "build":
            build(cfg, args.dist, args.object_cache, args.ccache)
            return 0
        return check(cfg, args.dist, args.keep, args.no_gpu, args.object_cache, args.tested_here)
    except HandoutError as e:
        print(f"handout: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
