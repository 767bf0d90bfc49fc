"""Messages for the staff when something around the tools is wrong: sbatch's refusals explained
(the controller down is not a course setting; a refused option names its key), and a staff command
run with a Python that lacks one of its modules names the module and how to get it. The
controller-down case on a real Slurm (its controller stopped) is in test_cluster_slurm.py."""
import sys

import pytest

from support import staff_class

import gemmlab_cluster  # noqa: E402  (cluster/, on sys.path through staff_class)
import slurm  # noqa: E402


@pytest.mark.parametrize("message, words", [
    ("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)",
     ["controller did not answer", "not a setting of the course", "sinfo"]),
    ("sbatch: error: Batch job submission failed: Socket timed out on send/recv operation", ["controller did not answer"]),
    # no slurm.conf on this node and none to fetch: the scheduler cannot be reached, no course setting
    ("sbatch: error: resolve_ctls_from_dns_srv: res_nsearch error: Unknown host\n"
     "sbatch: error: fetch_config: DNS SRV lookup failed\n"
     "sbatch: error: _establish_config_source: failed to fetch config\n"
     "sbatch: fatal: Could not establish a configuration source", ["controller did not answer", "not a setting"]),
    ("sbatch: error: Batch job submission failed: Invalid partition name specified", ["[cluster] partition"]),
    ("sbatch: error: Batch job submission failed: Invalid qos specification", ["[cluster] qos"]),
    ("sbatch: error: Invalid generic resource (gres) specification", ["[cluster] gres"]),
    ("sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)",
     ["[cluster] time_limit"]),
])
def test_sbatch_refusals_are_explained(message, words):
    text = slurm.hint(message)
    for w in words:
        assert w in text, (w, text)
    if "controller" in words[0]:
        assert "course.toml" not in text


def test_a_missing_module_is_named_not_a_traceback(tmp_path, monkeypatch, capsys):
    path = staff_class.write_config(tmp_path, roster=["alice"])
    staff_class.plan(staff_class.config.load(path))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # this Python has no matplotlib
    # the command's module and the staff tools it imports are imported afresh, whatever ran before here
    for name in ("commands.pages", "leaderboard", "similarity"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.delitem(sys.modules, "matplotlib.pyplot", raising=False)
    assert gemmlab_cluster.main(["--config", str(path), "leaderboard", "--name", "final"]) == 2
    err = capsys.readouterr().err
    assert "`leaderboard` needs the Python module 'matplotlib'" in err and "make setup" in err, err


def test_sweep_status_lists_the_sweeps_and_shows_the_latest(tmp_path, capsys):
    import os
    import time as _time
    cfg = staff_class.config.load(staff_class.write_config(tmp_path, roster=["alice"]))
    first = staff_class.plan(cfg, "midterm")
    _time.sleep(0.05)
    second = staff_class.plan(cfg, "final")
    os.utime(first / "plan.json", (1, 1))  # the midterm was planned long ago
    assert gemmlab_cluster.main(["--config", str(cfg.path), "sweep-status"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "sweeps: midterm (planned), final (planned); showing final (the latest)", out
    assert out[1].startswith("sweep final (no run): done 0"), out
    assert gemmlab_cluster.main(["--config", str(cfg.path), "sweep-status", "--name", "midterm"]) == 0
    assert "showing midterm\n" in capsys.readouterr().out
    assert gemmlab_cluster.main(["--config", str(cfg.path), "sweep-status", "--name", "fnal"]) == 1
    assert "no sweep 'fnal' in" in capsys.readouterr().err and second.exists()


def test_main_leaves_the_callers_umask_as_it_was(tmp_path):
    import os
    path = staff_class.write_config(tmp_path, roster=["alice"])
    old = os.umask(0o022)
    try:
        gemmlab_cluster.main(["--config", str(path), "status", "--user", "alice"])
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(old)
