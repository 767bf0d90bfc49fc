"""cluster/grading.py, the parts that run without a GPU or Slurm: the outcome record (its schema and
statuses, finish_outcome, an outcome written when no scratch can be made), who failed — the machine or
the hand-in (machine_failure, BuildError) —, where a grading runs (job_context, the scontrol readers,
grader_gpu), the make and grader runs' environment and logs, publishing a result in one rename, the
digest of the trusted tree and the Toolchain's key (with the CUDA toolkit's nvcc, no GPU).

A whole grading (build, grade, publish) is the flow tests' (test_cluster_local.py, test_cluster_slurm.py).

  /usr/bin/python3 -m pytest -q tests/py/cluster/test_grading.py
"""
import datetime as dt
import json
import os
import re
import socket
import sys
from pathlib import Path

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "cluster"))

import config  # noqa: E402
import grading  # noqa: E402
import toolchain  # noqa: E402
import slurm  # noqa: E402
import compile_stage  # noqa: E402  (grader/scripts/, on sys.path through grading)
import confine  # noqa: E402
from records import parse_iso  # noqa: E402


def course(tmp_path, cluster="", rest=""):
    path = tmp_path / "course.toml"
    path.write_text(f'[course]\nname = "unit"\n[cluster]\nscheduler = "local"\ngrader_root = "{ROOT}"\n'
                    f'trusted_cache = "{tmp_path}/cache"\n{cluster}\n{rest}\n')
    return config.load(path)


# ---- the outcome record --------------------------------------------------------------------------
def test_the_statuses_a_sweep_grades_again_are_the_failed_ones_and_no_gpu():
    assert grading.OUTCOME_SCHEMA == "gemmlab.cluster-outcome/1"
    assert grading.FAILED == ("error",)
    assert grading.SWEEP_RETRIES == ("error", "no_gpu")


def test_finish_outcome_stamps_the_end_and_writes_the_record(tmp_path):
    before = dt.datetime.now(dt.timezone.utc)
    outcome = grading.finish_outcome(tmp_path, {"schema": grading.OUTCOME_SCHEMA, "status": "graded"})
    after = dt.datetime.now(dt.timezone.utc)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", outcome["finished"])
    assert before <= parse_iso(outcome["finished"]) <= after
    assert json.loads((tmp_path / "outcome.json").read_text()) == outcome
    assert [p.name for p in tmp_path.iterdir()] == ["outcome.json"]  # no temporary file left beside it


def test_an_outcome_where_no_private_scratch_can_be_made_is_the_machines_error(tmp_path, monkeypatch):
    """grade_into with a scratch that is a file: the outcome says where and why, stamped and written,
    and nothing was built."""
    for var in ("SLURM_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    (tmp_path / "scratch-file").write_text("")
    cfg = course(tmp_path, f'scratch = "{tmp_path}/scratch-file"')
    out = tmp_path / "out"
    out.mkdir()
    meta = {"student": "alice", "attempt": "/box/alice/attempt-0001-20261204T000000Z"}
    outcome = grading.grade_into(cfg, {"tiled.cu": b"// mine\n"}, out, meta)
    host = socket.gethostname()
    assert outcome["status"] == "error" and grading.SWEEP_RETRIES.count(outcome["status"]) == 1
    assert outcome["message"] == (
        f"no private scratch for the build on {host}: {tmp_path}/scratch-file is not a directory (it was to hold "
        "private scratch): set [cluster] scratch in course.toml (empty: $TMPDIR, else /tmp) to a directory of this "
        "account's own, or one like /tmp")
    assert {k: outcome[k] for k in ("student", "attempt", "schema", "host", "job_id", "array_task", "node", "restarts",
                                    "gpu", "build_confinement")} == {
        **meta, "schema": grading.OUTCOME_SCHEMA, "host": host, "job_id": "", "array_task": "",
        "node": host.split(".")[0], "restarts": 0, "gpu": {"visible_devices": ""},
        "build_confinement": toolchain.confinement_note(cfg)}
    assert parse_iso(outcome["started"]) <= parse_iso(outcome["finished"])
    assert json.loads((out / "outcome.json").read_text()) == outcome
    assert sorted(p.name for p in out.iterdir()) == ["outcome.json"]


# ---- who failed: the machine or the hand-in ------------------------------------------------------
def test_a_build_error_is_the_machines_unless_it_says_otherwise():
    e = toolchain.BuildError("no nvcc")
    assert (str(e), e.log_tail, e.submission_fault) == ("no nvcc", "", False)
    assert toolchain.BuildError("does not build", "tail", submission_fault=True).submission_fault


def test_a_failed_make_with_nothing_of_the_machines_is_the_hand_ins(tmp_path):
    assert toolchain.machine_failure(2, tmp_path) is None


def test_a_compile_the_machine_stopped_is_named_with_its_file_and_cause(tmp_path):
    stages = tmp_path / "sub" / "stages"
    stages.mkdir(parents=True)
    (stages / f"tiled.o{compile_stage.ERROR_SUFFIX}").write_text(json.dumps({"shown": "tiled.cu", "cause": "ptxas was killed"}))
    (stages / f"naive.o{compile_stage.ERROR_SUFFIX}").write_text(json.dumps({"source": "/s/naive.cu", "cause": "no space"}))
    assert toolchain.machine_failure(2, tmp_path) == ("a stage file could not be compiled, and not because of the hand-in: "
                                                    "/s/naive.cu: no space; tiled.cu: ptxas was killed")


@pytest.mark.parametrize("rc, oom, why", [
    (-9, 0, "make was stopped by signal 9"),
    (127, 0, "make exited 127: a program it runs was not found"),
    (2, 3, f"the build failed because of the machine: the out-of-memory killer ended 3 process(es) on "
           f"{socket.gethostname()} while it ran"),
])
def test_a_make_the_machine_stopped_is_named(tmp_path, rc, oom, why):
    assert toolchain.machine_failure(rc, tmp_path, oom) == why


# ---- where a grading runs ------------------------------------------------------------------------
def test_job_context_outside_slurm_names_this_host_and_the_visible_gpus(monkeypatch):
    for var in ("SLURM_JOB_ID", "SLURMD_NODENAME", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert slurm.job_context() == {"node": socket.gethostname().split(".")[0], "restarts": 0,
                                     "gpu": {"visible_devices": "2,3"}}


def test_job_context_in_a_requeued_job_names_the_node_and_its_restarts(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("SLURMD_NODENAME", "gpu07")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "2")
    assert slurm.job_context() == {"node": "gpu07", "restarts": 2, "gpu": {"visible_devices": ""}}


@pytest.mark.parametrize("text, gpu", [
    ("JobId=9\n   TresPerNode=gres:gpu:a100:2\n", {"gres": "gpu:a100:2", "type": "a100"}),
    ("JobId=9\n   TresPerNode=gres/gpu:1\n", {"gres": "gpu:1", "type": ""}),
    ("JobId=9\n   Nodes=n1 GRES=gpu:l40s:1(IDX:0)\n   JOB_GRES=gpu:l40s:1\n", {"gres": "gpu:l40s:1", "type": "l40s"}),
    ("JobId=9 JobName=cpu\n", {}),
])
def test_the_gpu_of_a_job_is_read_from_any_of_scontrols_fields(text, gpu):
    assert slurm.gpu_from_scontrol(text) == gpu


@pytest.mark.parametrize("text, types", [
    ("NodeName=gpu07 Arch=x86_64\n   Gres=gpu:h100:2(S:0-1),gpu:a100:1\n", {"h100", "a100"}),
    ("NodeName=gpu07\n   Gres=gpu:h100:4\n", {"h100"}),
    ("NodeName=gpu07\n   Gres=gpu:4\n", set()),       # a count and no type
    ("NodeName=cpu01\n   Gres=(null)\n", set()),
    ("NodeName=cpu01\n", set()),
])
def test_a_nodes_gpu_types_are_read_from_its_gres(text, types):
    assert slurm.node_gpu_types(text) == types


def test_no_node_has_no_gpu_type():
    assert slurm.node_gpu_type("") == ""
    assert slurm.slurm_gpu("") == {}


def test_the_gpu_the_grader_measured_on_is_put_in_outcome_terms():
    env = {"environment": {"gpu": {"name": "NVIDIA H200", "uuid": "GPU-1", "pci_bus_id": "00000000:19:00.0",
                                   "compute_capability": "9.0", "memory_mb": 143771}}}
    assert grading.grader_gpu(env) == {"model": "NVIDIA H200", "uuid": "GPU-1", "pci_bus_id": "00000000:19:00.0",
                                       "compute_capability": "9.0"}
    assert grading.grader_gpu({"environment": {"gpu_available": False}}) == {}
    assert grading.grader_gpu(None) == {}


def test_jobs_follow_slurms_cpus_per_task(monkeypatch):
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "3")
    assert toolchain.jobs() == 3
    monkeypatch.delenv("SLURM_CPUS_PER_TASK")
    assert toolchain.jobs() == min(os.cpu_count() or 1, 8)


def test_compile_limits_are_the_courses_cells_compile_keys(tmp_path):
    cfg = course(tmp_path, rest="[cells]\ncompile_cpu_seconds = 7\ncompile_wall_seconds = 70\n"
                                "compile_memory_mb = 700\ncompile_file_mb = 17")
    assert toolchain.compile_limits(cfg) == confine.Limits(7, 70, 700, 17, until=0)
    assert toolchain.compile_limits(cfg, until=1234).until == 1234


def test_the_confinement_note_says_how_the_hand_in_was_compiled(tmp_path):
    off = toolchain.confinement_note(course(tmp_path, "confine_builds = false"))
    assert off.startswith("off ([cluster] confine_builds = false): the stage files were compiled unconfined")
    on = toolchain.confinement_note(course(tmp_path))
    try:
        abi = confine.abi()
    except confine.Unavailable as e:
        assert on == f"required, and unavailable here: {e}"
    else:
        assert on.startswith(f"on (Linux Landlock ABI {abi}): the compiler could read only the hand-in")


# ---- make's environment and logs ------------------------------------------------------------------
def test_clean_env_drops_an_outer_makes_state(monkeypatch, tmp_path):
    monkeypatch.setenv("CCACHE_DIR", str(tmp_path / "ccache"))
    env = toolchain.clean_env({"MAKEFLAGS": "-j8", "MAKELEVEL": "1", "GEMMLAB_COMMAND": "make submit", "KEEP": "1",
                             "CCACHE_DIR": str(tmp_path / "ccache")})
    assert env == {"KEEP": "1", "CCACHE_DIR": str(tmp_path / "ccache")}


def test_the_compiler_cache_is_turned_off_where_it_cannot_be_written(tmp_path):
    (tmp_path / "a-file").write_text("")
    env = toolchain.compiler_cache_env({"CCACHE_DIR": str(tmp_path / "a-file" / "ccache")})
    assert env["CCACHE_DISABLE"] == "1"
    env = toolchain.compiler_cache_env({"CCACHE_DIR": str(tmp_path / "ccache")})
    assert "CCACHE_DISABLE" not in env and (tmp_path / "ccache").is_dir()


def test_the_private_cache_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert toolchain.private_cache() == tmp_path / "xdg" / "gemmlab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert toolchain.private_cache() == tmp_path / "home" / ".cache" / "gemmlab"


def test_the_staffs_cache_comes_before_the_users_own(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert toolchain.cache_dirs(course(tmp_path)) == [tmp_path / "cache", tmp_path / "xdg" / "gemmlab"]


def test_run_logged_writes_the_command_and_its_output_and_returns_its_status(tmp_path):
    log = tmp_path / "build.log"
    log.write_text("earlier\n")
    rc = toolchain.run_logged([sys.executable, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(4)"],
                            tmp_path, log)
    assert rc == 4
    text = log.read_text()
    assert text.startswith("earlier\n$ " + sys.executable + " -c ")
    assert text.endswith("out\nerr\n") or text.endswith("err\nout\n")


def test_a_program_that_cannot_be_started_is_the_machines(tmp_path):
    with pytest.raises(toolchain.BuildError) as e:
        toolchain.run_logged([str(tmp_path / "no-make")], tmp_path, tmp_path / "log")
    assert str(e.value).startswith(f"{tmp_path / 'no-make'} could not be started on {socket.gethostname()}: ")
    assert not e.value.submission_fault


def test_run_streamed_hands_each_line_on_as_it_logs_it(tmp_path):
    lines = []
    rc = toolchain.run_streamed([sys.executable, "-c", "print('  NVCC    tiled.cu'); print('  NVCC    naive.cu')"],
                              tmp_path, tmp_path / "log", lines.append)
    assert rc == 0 and lines == ["  NVCC    tiled.cu\n", "  NVCC    naive.cu\n"]
    assert (tmp_path / "log").read_text().endswith("  NVCC    tiled.cu\n  NVCC    naive.cu\n")


def test_tail_is_the_last_lines_or_nothing(tmp_path):
    (tmp_path / "log").write_text("".join(f"line {i}\n" for i in range(100)))
    assert toolchain.tail(tmp_path / "log", 3) == "line 97\nline 98\nline 99"
    assert toolchain.tail(tmp_path / "none") == ""


# ---- publishing a result --------------------------------------------------------------------------
def result(d: Path, text: str) -> Path:
    d.mkdir()
    (d / "outcome.json").write_text(text)
    return d


def test_publish_moves_a_result_into_place(tmp_path):
    tmp, final = result(tmp_path / ".tmp-1", "new"), tmp_path / "abc"
    assert grading.publish(tmp, final) is True
    assert not tmp.exists() and (final / "outcome.json").read_text() == "new"


def test_publish_keeps_the_result_it_replaces_beside_it(tmp_path):
    final = result(tmp_path / "abc", "old")
    assert grading.publish(result(tmp_path / ".tmp-2", "new"), final) is True
    (kept,) = tmp_path.glob("abc.replaced-*")
    assert re.fullmatch(r"abc\.replaced-\d{8}T\d{12}", kept.name)
    assert (kept / "outcome.json").read_text() == "old" and (final / "outcome.json").read_text() == "new"


def test_publish_without_replace_leaves_the_result_in_place(tmp_path):
    final = result(tmp_path / "abc", "first")
    tmp = result(tmp_path / ".tmp-3", "second")
    assert grading.publish(tmp, final, replace=False) is False
    assert (final / "outcome.json").read_text() == "first" and tmp.is_dir()
    assert not list(tmp_path.glob("abc.replaced-*"))


# ---- the trusted tree and the toolchain -----------------------------------------------------------
def tree(base: Path) -> Path:
    for rel, text in {"Makefile": "all:\n", "grader/include/stage.h": "// api\n", "grader/src/judge.cpp": "// judge\n",
                      "reference/tiled.cu": "// solution\n", "student/tiled.cu": "// stub\n", str(Path("docs", "a.md")): "# a\n"}.items():  # (a page of no doc set)
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        (base / rel).write_text(text)
    return base


def test_the_tree_digest_is_of_the_makefile_the_grader_and_the_reference(tmp_path):
    root = tree(tmp_path / "t")
    first = toolchain.grader_tree_digest(root)
    assert re.fullmatch(r"[0-9a-f]{64}", first) and toolchain.grader_tree_digest(tree(tmp_path / "copy")) == first
    (root / "student" / "tiled.cu").write_text("// the student's\n")  # not the trusted tree's
    (root / "docs" / "b.md").write_text("# b\n")
    assert toolchain.grader_tree_digest(root) == first
    for rel in ("Makefile", "grader/include/stage.h", "grader/src/judge.cpp", "reference/tiled.cu"):
        before = (root / rel).read_text()
        (root / rel).write_text(before + "// changed\n")
        assert toolchain.grader_tree_digest(root) != first, rel
        (root / rel).write_text(before)
    (root / "reference" / "tiled.cu").rename(root / "reference" / "naive.cu")  # the names count, too
    assert toolchain.grader_tree_digest(root) != first


def test_the_trusted_tree_digest_of_a_course_is_its_grader_roots(tmp_path):
    assert toolchain.trusted_tree_digest(course(tmp_path)) == toolchain.grader_tree_digest(ROOT)


def test_make_vars_of_no_gemm_lab_tree_is_a_build_error(tmp_path):
    with pytest.raises(toolchain.BuildError) as e:
        toolchain.make_vars(tmp_path, None, tmp_path / "sub", "")
    assert str(e.value).startswith(f"could not read the Makefile's variables in {tmp_path}: ")


def test_nvcc_missing_says_to_load_the_toolkit(tmp_path):
    with pytest.raises(toolchain.BuildError) as e:
        toolchain.nvcc_version(str(tmp_path / "nvcc"))
    assert str(e.value) == f"nvcc not found ({tmp_path / 'nvcc'}): load the CUDA toolkit (e.g. `module load cuda`)"


@pytest.fixture(scope="module")
def toolchains(tmp_path_factory):
    """Toolchains of the repository's tree for the Makefile's architecture, again, and for sm_80."""
    base = tmp_path_factory.mktemp("toolchain")
    made = []
    for name, arch in (("a", ""), ("b", ""), ("c", "sm_80")):
        (base / name).mkdir()
        try:
            made.append(toolchain.Toolchain(course(base / name, f'arch = "{arch}"'), say=lambda *_: None))
        except toolchain.BuildError as e:
            pytest.skip(f"needs the CUDA toolkit's nvcc (the Makefile's NVCC): {e}")
    return made


def test_the_toolchain_files_its_builds_under_its_arch_and_key(toolchains):
    t = toolchains[0]
    assert re.fullmatch(r"sm_\d+[a-z]?", t.arch) and re.fullmatch(r"[0-9a-f]{64}", t.key)
    assert t.name == f"trusted-{t.arch}-{t.key[:16]}"
    assert t.tree == toolchain.grader_tree_digest(ROOT) and t.root == ROOT
    assert t.cuda_home == Path(t.nvcc).resolve().parents[1]


def test_the_toolchains_key_is_stable_and_follows_the_arch(toolchains):
    a, again, sm80 = toolchains
    assert again.key == a.key and again.name == a.name
    assert sm80.arch == "sm_80" and sm80.name.startswith("trusted-sm_80-")
    if a.arch != "sm_80":
        assert sm80.key != a.key


def test_an_objects_key_is_its_toolchains_and_its_bytes_not_its_scratch_path(toolchains, tmp_path):
    """The object cache's key of a stage file: the same bytes in another grading's scratch give the same
    key; other bytes, or another toolchain, another key."""
    a, _, sm80 = toolchains

    def keys(t, where, text):
        sub = tmp_path / where
        sub.mkdir(exist_ok=True)
        (sub / "tiled.cu").write_text(text)
        got = t._object_keys({"SUB_BUILD": str(tmp_path / "build"), "SUB_FLAGS": f"-O3 -I{sub}"}, sub)
        assert list(got) == [tmp_path / "build" / "stages" / "tiled.o"]
        return next(iter(got.values()))

    mine = keys(a, "grading-1", "// mine\n")
    assert re.fullmatch(r"[0-9a-f]{64}", mine)
    assert keys(a, "grading-2", "// mine\n") == mine
    assert keys(a, "grading-3", "// theirs\n") != mine
    assert keys(sm80, "grading-4", "// mine\n") != mine


# ---- grade_checked: what a feedback grading and a sweep's task both grade ----------------------------------
def stored(tmp_path, student="alice"):
    from support import staff_class
    import dropbox  # noqa: E402
    cfg = config.load(staff_class.write_config(tmp_path, roster=["alice", "bob"]))
    path = dropbox.store_attempt(cfg, student, dropbox.collect(cfg, ROOT / "student", None))
    (tmp_path / "out").mkdir()  # the fresh directory a caller grades into
    return cfg, path


@pytest.fixture
def graded(monkeypatch):
    """grade_into stood in for: what it was given (the build and the GPU are the flow tests')."""
    given = []
    def stand_in(cfg, files, out, meta, say=print):
        given.append(files)
        return grading.finish_outcome(out, dict(meta, schema=grading.OUTCOME_SCHEMA, status="graded", message="stand-in"))
    monkeypatch.setattr(grading, "grade_into", stand_in)
    return given


def test_grade_checked_grades_the_attempt_planned(tmp_path, graded):
    import attempts  # noqa: E402
    cfg, path = stored(tmp_path)
    a = attempts.one(cfg, path)
    out = grading.grade_checked(cfg, path, tmp_path / "out", {}, student="alice", digest=a.digest)
    assert out["status"] == "graded" and graded == [a.stage_bytes()]


@pytest.mark.parametrize("student, digest, waived, changed, why", [
    ("bob", None, False, False, "the attempt lies in alice's directory, not bob's"),
    ("alice", "0" * 64, False, False, "the attempt changed since the sweep planned it"),
    ("alice", None, False, True, "tiled.cu does not match its sha256 in the manifest"),
    ("alice", "0" * 64, True, False, "the attempt changed since the staff accepted it"),
])
def test_grade_checked_records_why_an_attempt_is_not_graded(tmp_path, graded, student, digest, waived, changed, why):
    cfg, path = stored(tmp_path)
    if changed:
        (path / "files" / "tiled.cu").write_text("// changed after it was stored\n")
    out = grading.grade_checked(cfg, path, tmp_path / "out", {}, student=student, digest=digest, waived=waived)
    assert (out["status"], out["message"]) == ("tampered", why) and graded == []
    assert json.loads((tmp_path / "out" / "outcome.json").read_text())["status"] == "tampered"


def test_grade_checked_of_an_attempt_that_is_gone_is_tampered_naming_why(tmp_path, graded):
    import shutil
    cfg, path = stored(tmp_path)
    shutil.rmtree(path)
    out = grading.grade_checked(cfg, path, tmp_path / "out", {}, student="alice")
    assert out["status"] == "tampered" and out["message"].startswith("the attempt cannot be read: ") and graded == []
