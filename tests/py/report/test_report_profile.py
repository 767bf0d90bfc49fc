"""report/report_profile.py, function by function: the profiles `make profile` wrote read from a folder
(load_profiles: other files left alone, a broken one named), a profile of a stage file changed since
(stale), their order (the registry's, then variant and precision), and the report's "profiles" block
(profiles_block, add_profiles), from the example profile in tests/fixtures/report/profile.

  python3 -m pytest -q tests/py/report/test_report_profile.py
"""
import copy
import hashlib
import json
import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "report"))

import report_profile as rp  # noqa: E402
from report_data import ReportError  # noqa: E402
from report_tables import notice  # noqa: E402
import ncu_profile  # noqa: E402  (grader/scripts, on sys.path through report_profile)

EXAMPLE = json.loads((ROOT / "tests" / "fixtures" / "report" / "profile" / "tiled-16-float.json").read_text())


def profile(stage="tiled", variant="16", precision="float", **kw):
    doc = copy.deepcopy(EXAMPLE)
    doc.update({"stage": stage, "variant": variant, "label": f"{stage}/{variant}" if variant else stage,
                "precision": precision, "stage_file": {}, **kw})
    return doc


def write(folder, name, doc):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(doc if isinstance(doc, str) else json.dumps(doc))


# ---- reading a folder of profiles ----------------------------------------------------------------------
def test_no_folder_holds_no_profiles(tmp_path):
    assert rp.load_profiles(None) == [] and rp.load_profiles(tmp_path / "none") == []


def test_the_profiles_of_a_folder_are_read_with_their_paths_and_other_json_left_alone(tmp_path):
    write(tmp_path, "tiled-16-float.json", profile())
    write(tmp_path, "notes.json", {"schema": "someone-elses/1"})
    write(tmp_path, "list.json", [1, 2])
    write(tmp_path, "tiled-16-float.csv", "not json")
    (doc,) = rp.load_profiles(tmp_path)
    assert doc["path"] == str(tmp_path / "tiled-16-float.json")
    assert doc["schema"] == ncu_profile.SCHEMA and doc["label"] == "tiled/16"


def test_a_profile_that_is_not_json_is_named_with_what_to_do(tmp_path):
    write(tmp_path, "tiled-16-float.json", "{")
    with pytest.raises(ReportError) as e:
        rp.load_profiles(tmp_path)
    assert str(e.value).startswith(f"{tmp_path / 'tiled-16-float.json'}: not a profile (")
    assert str(e.value).endswith("); run make profile again or delete it")


def test_a_profile_without_its_kernels_is_named(tmp_path):
    write(tmp_path, "tiled-16-float.json", {**profile(), "kernels": None})
    with pytest.raises(ReportError) as e:
        rp.load_profiles(tmp_path)
    assert str(e.value) == f"{tmp_path / 'tiled-16-float.json'}: a profile without its kernels; run make profile again"


# ---- stale profiles --------------------------------------------------------------------------------
def test_a_profile_of_a_stage_file_changed_since_is_stale(tmp_path):
    (tmp_path / "student").mkdir()
    source = tmp_path / "student" / "tiled.cu"
    source.write_text("// as profiled\n")
    doc = profile(stage_file={"path": "student/tiled.cu",
                              "sha256": "sha256:" + hashlib.sha256(b"// as profiled\n").hexdigest()})
    assert rp.stale(doc, root=tmp_path) is None
    source.write_text("// changed since\n")
    assert rp.stale(doc, root=tmp_path) == "student/tiled.cu"


def test_a_profile_whose_stage_file_is_unknown_or_gone_is_not_stale(tmp_path):
    assert rp.stale(profile(), root=tmp_path) is None
    gone = profile(stage_file={"path": "student/gone.cu", "sha256": "sha256:" + "0" * 64})
    assert rp.stale(gone, root=tmp_path) is None


def test_profiles_follow_the_registry_then_the_variant_then_float_before_double():
    docs = [profile("reuse", "", "double"), profile("tiled", "32", "float"), profile("tiled", "16", "double"),
            profile("tiled", "16", "float"), profile("retired", "", "float"), profile("reuse", "", "float")]
    got = [(d["label"], d["precision"]) for d in rp.order(docs, ["naive", "tiled", "reuse"])]
    assert got == [("tiled/16", "float"), ("tiled/16", "double"), ("tiled/32", "float"), ("reuse", "float"),
                   ("reuse", "double"), ("retired", "float")]


# ---- the block ----------------------------------------------------------------------------------------
def test_no_profile_is_a_notice_naming_the_command_and_the_folder():
    assert rp.profiles_block([], ["tiled"], "results/student/profile") == notice(
        "No profiles yet: `make profile STAGE=tiled/16 PREC=float` on a GPU node writes one "
        "(results/student/profile), and `make report` shows it here.")


def test_the_block_holds_each_profiles_table_in_order():
    docs = [profile("tiled", "16", "double"), profile("tiled", "16", "float")]
    block = rp.profiles_block(docs, ["tiled"], "p")
    assert block.startswith("Nsight Compute on one call of each stage below (`make profile`), kernel by kernel.")
    tables = [ncu_profile.markdown(d, heading=None) for d in rp.order(docs, ["tiled"])]
    assert block.index(tables[0]) < block.index(tables[1])
    assert "Placeholder profile" not in block and "changed since" not in block


def test_the_block_marks_a_placeholder_and_a_stale_profile():
    """A profile whose file (relative to the checkout) no longer has the hash it was taken of is marked."""
    doc = profile(placeholder=True, stage_file={"path": "report/report.md", "sha256": "sha256:" + "0" * 64})
    block = rp.profiles_block([doc], ["tiled"], "p")
    assert notice("Placeholder profile (written by hand in ncu's format, not measured): make profile replaces "
                  "it.") in block
    assert block.endswith("*report/report.md changed since this profile was taken: run `make profile STAGE=tiled/16 "
                          "PREC=float` again.*\n")


def test_add_profiles_writes_the_block_and_counts_the_profiles(tmp_path):
    write(tmp_path / "profile", "a.json", profile())
    write(tmp_path / "profile", "b.json", profile(precision="double"))
    blocks = {}
    assert rp.add_profiles(blocks, tmp_path, tmp_path / "profile", ["tiled"]) == 2
    assert (tmp_path / "profiles.md").read_text() == blocks["profiles"]
    assert rp.add_profiles(blocks, tmp_path, None, ["tiled"]) == 0
    assert "(no results folder)" in blocks["profiles"]
