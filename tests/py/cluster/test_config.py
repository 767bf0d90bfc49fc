"""cluster/config.py, function by function: loading a course.toml (its values, its deadline, the
defaults of what it leaves out), a misspelt section or key refused with a message that names the file,
the line and the name probably meant, values of the wrong type, path settings relative to course.toml,
[similarity] archive's two layouts, [cells] limits, and the Deadline arithmetic the late policy uses.

test_cluster_unit.py keeps the repository's own course.toml in step with DEFAULTS and a table of
wrong [cluster] values; this file tests the rest of the module directly.

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_config.py
"""
import datetime as dt
import json
import os
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "cluster"))

import cell  # noqa: E402
import config  # noqa: E402

UTC = dt.timezone.utc
D = dt.timedelta(days=1)


def write(tmp_path, cluster="", rest="", name="course.toml") -> Path:
    """A course.toml of a local-scheduler course in tmp_path: [cluster] with the given lines, then `rest`."""
    path = tmp_path / name
    path.write_text(f'[course]\nname = "unit"\n[cluster]\nscheduler = "local"\ngrader_root = "{ROOT}"\n'
                    f"{cluster}\n{rest}\n")
    return path


def refused(path) -> str:
    with pytest.raises(config.ConfigError) as e:
        config.load(path)
    return str(e.value)


# ---- loading a course -----------------------------------------------------------------------------
def test_a_course_loads_with_its_values_and_the_defaults_of_the_rest(tmp_path):
    path = write(tmp_path, 'partition = "gpu"\ncpus_per_task = 4',
                 "[deadline]\ndue = 2026-12-04T23:59:00-08:00\ngrace_minutes = 15\n"
                 "[late]\npolicy = \"prefer-on-time\"\npenalty_percent_per_day = 10")
    cfg = config.load(path)
    assert cfg.path == path.resolve() and cfg.root == path.resolve().parent and cfg.course == "unit"
    assert (cfg.partition, cfg.cpus_per_task, cfg.scheduler) == ("gpu", 4, "local")
    assert (cfg.gres, cfg.time_limit, cfg.max_source_kb) == ("gpu:1", "00:30:00", 256)  # defaults
    assert cfg.deadline.due == dt.datetime(2026, 12, 5, 7, 59, tzinfo=UTC)  # in UTC
    assert cfg.deadline.zone == dt.timezone(-dt.timedelta(hours=8))      # the course's own offset
    assert (cfg.deadline.grace, cfg.deadline.policy, cfg.deadline.penalty_per_day, cfg.deadline.max_penalty) == (
        dt.timedelta(minutes=15), "prefer-on-time", 10.0, 100.0)
    assert cfg.setting("similarity", "noise_threshold") == 25 and cfg.setting("leaderboard", "stages") == ["reuse", "tensor"]
    assert set(cfg.settings) == {f"{s}.{k}" for s, k in config.DEFAULTS}
    with pytest.raises(AttributeError):
        cfg.no_such_key


def test_a_missing_file_names_the_option_that_gives_another(tmp_path):
    path = tmp_path / "nowhere.toml"
    assert refused(path) == (f"{path}: no such course configuration; pass --config <course.toml> "
                             "(make: CONFIG=<course.toml>)")


def test_a_file_that_is_not_toml_says_so(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text("[cluster\n")
    assert refused(path).startswith(f"{path}: not valid TOML: ")


def test_a_misspelt_section_is_named_with_its_line_and_the_section_meant(tmp_path):
    path = write(tmp_path, rest="[deadlines]\ndue = 2026-12-04T23:59:00Z")
    line = path.read_text().splitlines().index("[deadlines]") + 1
    assert refused(path) == (f"{path.resolve()}, line {line}: unknown section [deadlines] (did you mean [deadline]?); "
                             "the sections of course.toml are: " + ", ".join(f"[{s}]" for s in config.COURSE_SECTIONS))


def test_a_section_nothing_resembles_is_named_without_a_guess(tmp_path):
    message = refused(write(tmp_path, rest="[zzz]\nx = 1"))
    assert "unknown section [zzz]; the sections of course.toml are: [course], [cluster]" in message


def test_a_key_outside_any_section_names_the_section_it_belongs_to(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(f'due = 2026-12-04T23:59:00Z\n[cluster]\ngrader_root = "{ROOT}"\n')
    assert refused(path) == (f"{path}, line 1: 'due' is a key outside any section (it belongs under [deadline]): "
                             "keys go under a [section] header")


def test_a_misspelt_key_is_named_with_the_key_meant(tmp_path):
    path = write(tmp_path, rest="[late]\npenalty_per_day = 10")
    assert refused(path) == f"{path.resolve()}: [late] penalty_per_day: unknown key (did you mean 'penalty_percent_per_day'?)"


def test_a_key_nothing_resembles_lists_the_sections_keys(tmp_path):
    path = write(tmp_path, rest="[deadline]\nzzz = 1")
    assert refused(path) == f"{path.resolve()}: [deadline] zzz: unknown key; known keys: due, grace_minutes"


def test_a_section_that_is_no_table_is_refused(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(f'late = 3\n[cluster]\ngrader_root = "{ROOT}"\n')
    assert refused(path) == f"{path}: [late] should be a table"


@pytest.mark.parametrize("line, shown, kind", [
    ("cpus_per_task = true", "True", "a whole number"),
    ("cpus_per_task = 2.5", "2.5", "a whole number"),
    ('roster = 7', "7", "a string"),
    ("roster_accounts = 1", "1", "true or false"),
])
def test_a_value_of_the_wrong_type_names_the_type_wanted_and_the_keys_help(tmp_path, line, shown, kind):
    path = write(tmp_path, line)
    key = line.split(" =")[0]
    assert refused(path) == (f"{path.resolve()}: [cluster] {key} = {shown} should be {kind} "
                             f"({config.DEFAULTS[('cluster', key)][1]})")


def test_a_list_holding_no_strings_is_refused(tmp_path):
    message = refused(write(tmp_path, rest="[leaderboard]\nstages = [1, 2]"))
    assert "[leaderboard] stages = [1, 2] should be a list of strings" in message


def test_whole_numbers_and_numbers_are_taken_in_either_spelling(tmp_path):
    cfg = config.load(write(tmp_path, "cpus_per_task = 4.0", "[similarity]\nreport_threshold = 1"))
    assert cfg.cpus_per_task == 4 and isinstance(cfg.cpus_per_task, int)
    assert cfg.setting("similarity", "report_threshold") == 1.0
    assert isinstance(cfg.setting("similarity", "report_threshold"), float)


def test_a_due_date_as_a_string_is_read_in_utc(tmp_path):
    cfg = config.load(write(tmp_path, rest='[deadline]\ndue = "2026-12-04T23:59:00+01:00"'))
    assert cfg.deadline.due == dt.datetime(2026, 12, 4, 22, 59, tzinfo=UTC)
    assert cfg.deadline.zone == dt.timezone(dt.timedelta(hours=1))


def test_a_cutoff_without_a_due_date_is_refused(tmp_path):
    path = write(tmp_path, rest="[late]\ncutoff = 2026-12-04T23:59:00Z")
    assert refused(path) == f"{path.resolve()}: [late] cutoff is set but [deadline] due is not: set the due date too"


def test_a_course_name_that_cannot_name_a_handout_is_refused(tmp_path):
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "my course"\n[cluster]\ngrader_root = "{ROOT}"\n')
    assert refused(path) == (f"{path}: [course] name = 'my course': use letters, digits, '.', '_' or '-' (it names "
                             "the handout and the LMS columns)")


# ---- paths, relative to course.toml ------------------------------------------------------------------
def test_path_settings_are_relative_to_the_directory_of_course_toml(tmp_path, monkeypatch):
    (tmp_path / "term").mkdir()
    path = write(tmp_path / "term", 'dropbox = "box"\nsweeps = "../sweeps"\nroster = "class/roster.txt"\n'
                                    'scratch = "/var/tmp/gemmlab"', '[extensions]\nfile = "ext.toml"')
    monkeypatch.chdir("/")  # never the working directory's
    cfg = config.load(path)
    term = path.resolve().parent
    assert cfg.dropbox_dir == term / "box"
    assert cfg.sweeps_dir == term / "../sweeps"
    assert cfg.roster_path == term / "class" / "roster.txt"
    assert cfg.scratch_dir == Path("/var/tmp/gemmlab")  # absolute: as written
    assert cfg.file_setting("extensions", "file") == term / "ext.toml"
    assert cfg.file_setting("export", "canvas_roster") is None  # "": no file


def test_path_settings_left_out_take_their_defaults_below_course_toml(tmp_path, monkeypatch):
    path = write(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "node-tmp"))
    cfg = config.load(path)
    assert cfg.dropbox_dir == tmp_path / "results" / "dropbox"
    assert cfg.sweeps_dir == tmp_path / "results" / "sweeps"
    assert cfg.trusted_cache_dir == tmp_path / "results" / "grader-cache"
    assert cfg.roster_path is None
    assert cfg.scratch_dir == tmp_path / "node-tmp"  # "" = $TMPDIR


def test_a_path_setting_may_start_at_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cfg = config.load(write(tmp_path, 'dropbox = "~/box"'))
    assert cfg.dropbox_dir == tmp_path / "home" / "box"


def test_grader_root_is_relative_to_course_toml_too(tmp_path, monkeypatch):
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "unit"\n[cluster]\ngrader_root = "{os.path.relpath(ROOT, tmp_path)}"\n')
    monkeypatch.chdir("/")
    assert config.load(path).grader_dir == ROOT


def test_a_staff_path_a_confined_compile_may_read_is_refused(tmp_path):
    path = write(tmp_path, 'dropbox = "/usr/include/gemmlab-dropbox"')
    message = refused(path)
    assert message.startswith(f"{path.resolve()}: [cluster] confine_builds: [cluster] dropbox "
                              "(/usr/include/gemmlab-dropbox) and /usr/include, which a confined compile")
    assert message.endswith("Move [cluster] dropbox out of /usr/include, or set confine_builds = false")
    cfg = config.load(write(tmp_path, 'dropbox = "/usr/include/gemmlab-dropbox"\nconfine_builds = false'))
    assert cfg.dropbox_dir == Path("/usr/include/gemmlab-dropbox")


# ---- [similarity] archive --------------------------------------------------------------------------
def test_an_archive_of_a_sweep_and_of_drop_boxes_is_read_with_its_layout(tmp_path):
    (tmp_path / "old" / "final").mkdir(parents=True)
    (tmp_path / "old" / "final" / "plan.json").write_text(json.dumps({"students": []}))
    (tmp_path / "fall" / "alice" / "attempt-0001-20250101T000000Z").mkdir(parents=True)
    (tmp_path / "spring" / ("bob+" + "0" * 32) / "attempt-0003-20250601T000000Z").mkdir(parents=True)
    cfg = config.load(write(tmp_path, rest='[similarity]\narchive = ["old/final", "fall", "' + str(tmp_path / "spring") + '"]'))
    assert cfg.similarity_archive() == [(tmp_path / "old" / "final", "sweep"), (tmp_path / "fall", "dropbox"),
                                        (tmp_path / "spring", "dropbox")]


def test_no_archive_is_an_empty_list(tmp_path):
    assert config.load(write(tmp_path)).similarity_archive() == []


@pytest.mark.parametrize("make, why", [
    (lambda p: None, "does not exist"),
    (lambda p: p.write_text("x"), "is not a directory"),
])
def test_an_archive_entry_that_is_no_directory_is_named(tmp_path, make, why):
    make(tmp_path / "gone")
    path = write(tmp_path, rest='[similarity]\narchive = ["gone"]')
    cfg = config.load(path)  # a moved archive never stops loading the course
    with pytest.raises(config.ConfigError) as e:
        cfg.similarity_archive()
    assert str(e.value) == (f"{path.resolve()}: [similarity] archive: 'gone': {tmp_path / 'gone'} {why}; name an "
                            "earlier term's drop box or sweep directory, or take the entry out")


def test_an_archive_entry_of_neither_layout_is_named(tmp_path):
    (tmp_path / "misc" / "alice" / "notes").mkdir(parents=True)
    path = write(tmp_path, rest='[similarity]\narchive = ["misc"]')
    with pytest.raises(config.ConfigError) as e:
        config.load(path).similarity_archive()
    assert str(e.value).endswith(f"{tmp_path / 'misc'} is neither a sweep directory (no plan.json) nor a drop box "
                                 "(no <folder>/attempt-*/ directories in it)")


# ---- [cells] ----------------------------------------------------------------------------------------
def test_cells_limits_are_the_defaults_where_the_section_is_left_out(tmp_path):
    assert cell.limits_of(config.load(write(tmp_path))) == cell.Limits()


def test_cells_limits_of_a_course_reach_the_cells(tmp_path):
    cfg = config.load(write(tmp_path, rest="[cells]\ncpu_seconds = 5\nwall_seconds = 9\nmemory_mb = 256\n"
                                           "open_files = 32\ncompile_memory_mb = 2048"))
    assert cell.limits_of(cfg) == cell.Limits(cpu_seconds=5, wall_seconds=9, memory_mb=256, file_size_mb=16,
                                              open_files=32, output_mb=16)
    assert cfg.setting("cells", "compile_memory_mb") == 2048


@pytest.mark.parametrize("key", [k for s, k in config.DEFAULTS if s == "cells"])
def test_a_cells_limit_below_one_is_refused(tmp_path, key):
    path = write(tmp_path, rest=f"[cells]\n{key} = 0")
    assert refused(path) == f"{path.resolve()}: [cells] {key} = 0: must be at least 1"


# ---- the deadline ----------------------------------------------------------------------------------
DUE = dt.datetime(2026, 12, 4, 23, 59, tzinfo=UTC)


def deadline(**kw):
    args = dict(due=DUE, grace=dt.timedelta(0), policy="latest", cutoff=None, penalty_per_day=10.0, max_penalty=25.0)
    return config.Deadline(**{**args, **kw})


def test_lateness_counts_from_the_due_date_plus_its_grace():
    d = deadline(grace=dt.timedelta(minutes=5))
    assert d.lateness(DUE + dt.timedelta(minutes=5)) == dt.timedelta(0)
    assert d.lateness(DUE + dt.timedelta(minutes=6)) == dt.timedelta(minutes=1)
    assert deadline(due=None).lateness(DUE + D) == dt.timedelta(0)


def test_the_penalty_is_per_started_day_up_to_its_most():
    d = deadline()
    assert d.penalty_percent(DUE) == 0.0
    assert d.penalty_percent(DUE + dt.timedelta(seconds=1)) == 10.0  # one second late: one started day
    assert d.penalty_percent(DUE + D) == 10.0
    assert d.penalty_percent(DUE + D + dt.timedelta(seconds=1)) == 20.0
    assert d.penalty_percent(DUE + 10 * D) == 25.0                   # max_penalty


def test_an_extension_moves_the_cutoff_by_as_much():
    d = deadline(cutoff=DUE + 2 * D).shifted(DUE + 3 * D)
    assert (d.due, d.cutoff) == (DUE + 3 * D, DUE + 5 * D)
    assert deadline(due=None).shifted(DUE) == deadline(due=None)


def test_a_course_is_open_until_its_cutoff_except_on_time_only():
    grace = dt.timedelta(minutes=10)
    assert deadline(grace=grace).open_until() == DUE + grace
    assert deadline(grace=grace, cutoff=DUE + D).open_until() == DUE + D
    assert deadline(grace=grace, cutoff=DUE + D, policy="on-time-only").open_until() == DUE + grace
    assert deadline(due=None).open_until() is None


def test_a_moment_is_shown_in_utc_and_in_the_courses_zone():
    pacific = dt.timezone(-dt.timedelta(hours=8))
    assert config.course_time(DUE, None) == "2026-12-04T23:59:00Z"
    assert config.course_time(DUE, UTC) == "2026-12-04T23:59:00Z"
    assert deadline(zone=pacific).shown(DUE) == "2026-12-04T23:59:00Z (2026-12-04 15:59 -08:00, the course's time)"


@pytest.mark.parametrize("raw, words", [
    ("2026-12-04T23:59:00", "has no time zone"),
    (dt.date(2026, 12, 4), "has no time of day"),
    ("friday", "'friday' is not a date-time"),
    (7, "7 is not a date-time"),
])
def test_parse_when_says_what_is_wrong_with_a_date(raw, words):
    with pytest.raises(ValueError) as e:
        config.parse_when(raw)
    assert words in str(e.value)


def test_parse_when_reads_z_and_offsets_in_utc():
    assert config.parse_when("2026-12-04T23:59:00Z") == DUE
    assert config.parse_when(" 2026-12-05T00:59:00+01:00 ") == DUE
    assert config.parse_when(DUE.astimezone(dt.timezone(dt.timedelta(hours=3)))) == DUE


# ---- Slurm options --------------------------------------------------------------------------------
def test_the_gpu_node_options_are_the_keys_that_are_set(tmp_path):
    cfg = config.load(write(tmp_path, 'partition = "gpu"\naccount = "cs101"\nconstraint = "h100"\nmem = "16G"'))
    assert config.srun_line(cfg.values) == "srun --partition=gpu --account=cs101 --gres=gpu:1 --constraint=h100"
    assert cfg.sbatch_options() == ["--partition=gpu", "--account=cs101", "--gres=gpu:1", "--constraint=h100",
                                    "--mem=16G", "--cpus-per-task=2", "--time=00:30:00"]
    assert config.srun_line({}) == "srun"


def test_a_local_course_grades_here(tmp_path):
    cfg = config.load(write(tmp_path))
    assert cfg.grading_mode() == "local" and not cfg.use_slurm()
