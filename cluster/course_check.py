"""course_check.py — a course's files checked as every tool that reads them will, on this machine,
before anything is queued: course.toml's sections and keys (the cluster's, [report], [handout], and
[bench]/[scoring] by the grader's own gemmlab-config from the trusted build), the roster, the
extensions and aliases files, and what a confined compile may read. `validate`, `setup`, `publish` and
`sweep` all run it.
"""
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import attempts as door  # the one way into the drop box
import class_files
import config as config_mod
import toolchain
from config import ConfigError

TREE = Path(__file__).resolve().parents[1]  # the tool's own tree (report/, grader/scripts/)


@dataclasses.dataclass
class Validated:
    checked: list[str]   # what was checked, for the staff to read
    rubric: dict         # `gemmlab-config --json`: the rubric as the grader reads it, measurement and rubric keys
    checker: Path        # the trusted build's gemmlab-config (rescores run it)


def validate_course(cfg, build_log: Path, say=print, roster_may_be_missing=False) -> Validated:
    """Every file of the course checked as the tools that read it will, on this machine, before
    anything is queued: course.toml's sections and keys (the cluster's, [report], [handout], and
    [bench]/[scoring] by the grader's own gemmlab-config from the trusted build), the roster and the
    extensions and aliases files. The first mistake raises ConfigError (exit 2).
    roster_may_be_missing: a roster file that does not exist yet is noted, not an error (setup, early in term)."""
    checked = [f"course.toml: the cluster's sections ({cfg.path})"]
    if roster_may_be_missing and cfg.roster_path and not cfg.roster_path.exists():
        checked.append(f"roster: {cfg.roster_path} does not exist yet (write it before the first sweep)")
        cfg = dataclasses.replace(cfg, values={**cfg.values, "roster": ""})
    elif cfg.roster_path:
        roster = class_files.read_roster(cfg)
        accounts = ", each an account here" if cfg.values["roster_accounts"] and roster else ""
        checked.append(f"roster: {len(roster)} student(s){accounts}")
    else:
        checked.append("roster: none set (the class is whoever hands in)")
    known = set(door.students(cfg))
    ext = class_files.load_extensions(cfg, known, class_files.class_source(cfg))
    checked.append(f"extensions: {len(ext)}")
    archive = cfg.similarity_archive()
    if archive:
        checked.append("similarity archive: " + ", ".join(f"{p} ({layout})" for p, layout in archive))
    if cfg.file_setting("leaderboard", "aliases") is not None:
        checked.append(f"leaderboard aliases: {len(class_files.load_aliases(cfg, known, class_files.class_source(cfg)))}")
    sys.path.insert(0, str(TREE / "report"))
    import report_data  # noqa: E402  (the report's own reader of [report])
    try:
        report_data.load_report_set(cfg.path)
    except report_data.ReportError as e:
        raise ConfigError(str(e)) from None
    checked.append("[report]")
    if (TREE / "grader" / "scripts" / "handout.py").is_file():  # instructor trees only
        sys.path.insert(0, str(TREE / "grader" / "scripts"))
        import handout  # noqa: E402  (make handout's own reader of [handout])
        try:
            handout.load_config(cfg.path)
        except handout.HandoutError as e:
            raise ConfigError(str(e)) from None
        checked.append("[handout]")
    tool = toolchain.Toolchain(cfg, say=say)
    # what a confined compile may read, the CUDA toolkit included (config.load could not know it)
    overlap = cfg.values["confine_builds"] and config_mod.confinement_overlap(
        cfg, [tool.cuda_home, *toolchain.confine.host_compiler_home()])
    if overlap:
        raise ConfigError(f"{cfg.source}: [cluster] confine_builds: {overlap}")
    checked.append(f"the compiles of hand-ins (on this machine): {toolchain.confinement_note(cfg)}")
    checker = tool.config_checker(tool.trusted(build_log))
    try:
        r = subprocess.run([str(checker), "--config", str(cfg.path)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise toolchain.BuildError(f"the grader's configuration check ({checker}) did not run: {e}") from None
    if r.returncode == 2:
        raise ConfigError(f"the grader refuses this course.toml: {r.stderr.strip()}")
    if r.returncode != 0:
        raise toolchain.BuildError(f"the grader's configuration check ({checker}) failed (exit {r.returncode}): "
                                 f"{(r.stderr or r.stdout).strip()[-2000:]}")
    checked.append("[bench] and [scoring] by the grader: " + r.stdout.splitlines()[0].split(": ", 2)[-1])
    r = subprocess.run([str(checker), "--config", str(cfg.path), "--json"], capture_output=True, text=True, timeout=60)
    try:
        rubric = json.loads(r.stdout)
    except ValueError:
        raise toolchain.BuildError(f"the grader's configuration check ({checker}) printed no rubric (exit {r.returncode}): "
                                 f"{(r.stderr or r.stdout).strip()[-2000:]}") from None
    return Validated(checked, rubric, checker)
