"""grader/scripts/registry.py: the stage registry (grader/include/gemmlab/stages.h) as every script reads
it, held to the grader's own reading (`gemmlab list --json`: the saved listing, and a built grader's
where there is one), with no GPU."""
import glob
import json
import os
import subprocess
import sys

import pytest

from support.paths import ROOT
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import registry  # noqa: E402

LISTING = ROOT / "tests" / "fixtures" / "report" / "registry.json"  # `gemmlab list --json`, saved


def as_listed(stages):
    """What registry.read() and `gemmlab list --json` both say of each stage (the listing labels the one
    version of a stage "", the registry gives it no variant)."""
    return [(s["name"], [v for v in s["variants"] if v], s["tensor_cores"]) for s in stages]


def built_grader():
    """A gemmlab of this tree: $GEMMLAB_GRADER (make test), else one a build left under build/."""
    found = [os.environ.get("GEMMLAB_GRADER", "")] + sorted(glob.glob(str(ROOT / "build" / "*" / "sub-*" / "gemmlab")))
    return next((g for g in found if g and os.access(g, os.X_OK)), None)


def test_the_registry_is_the_grader_listing_saved_beside_the_report_fixtures():
    mine = [(s.name, list(s.variants), s.tensor_cores) for s in registry.read()]
    assert mine == as_listed(json.loads(LISTING.read_text())["stages"])
    assert registry.stage_names() == ["naive", "tiled", "unrolled", "pitched", "reuse", "tensor"]


def test_the_registry_is_what_a_built_grader_lists():
    grader = built_grader()
    if not grader:
        pytest.skip("no built grader (GEMMLAB_GRADER, or build/*/sub-*/gemmlab): the saved listing is checked above")
    listed = json.loads(subprocess.run([grader, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    assert [(s.name, list(s.variants), s.tensor_cores) for s in registry.read()] == as_listed(listed["stages"])


def test_only_the_tensor_stage_may_use_the_tensor_cores():
    assert registry.tensor_core_stages() == {"tensor"}


def test_variants_and_what_a_wrong_one_is_told():
    assert registry.variants("tiled") == ["8", "16", "32"] and registry.variants("naive") == []
    assert registry.variants("tensor") == ["fp16", "tf32", "3xtf32"] and registry.variants("warp") is None
    assert registry.variant_problem("tiled/16") == "" and registry.variant_problem("tiled") == ""
    assert registry.variant_problem("tiled/17") == "stage tiled has no variant 17: its variants are 8, 16, 32"
    assert "it has one version: say STAGE=naive" in registry.variant_problem("naive/16")
    assert registry.variant_problem("nosuchstage/1") == ""  # the stage file's own check speaks of it


def test_entry_points_are_keyed_as_nm_demangles_them():
    runs = registry.entry_point_runs()
    assert runs[("gemm_tiled", "float, 16")] == [("tiled", "16", "float")]
    assert runs[("gemm_tensor", "float, (gemmlab::InputPrecision)2")] == [("tensor", "fp16", "float")]
    assert runs[("gemm_tensor", "double, (gemmlab::InputPrecision)0")] == [
        ("tensor", "fp16", "double"), ("tensor", "tf32", "double"), ("tensor", "3xtf32", "double")]
    assert runs[("*pitched", "double")] == [("pitched", "", "double")]


def test_precision_labels_are_the_tensor_variants():
    assert registry.precision_labels() == {0: "3xtf32", 1: "tf32", 2: "fp16"}


def test_a_new_row_is_read_with_its_variants_and_comments_are_not(tmp_path):
    """Adding a stage is one row (docs/ARCHITECTURE.md, "Adding a stage"); a comment between rows is no row."""
    header = registry.HEADER.read_text()
    row = ('        {"warp", "Warp tiling", "warp", "warps own tiles of C", Operands::dense, false,\n'
           '         // {"old", "A retired row", ...},\n'
           '         {{"64", stage_fns_dense<float>(&gemm_warp<float, 64>), stage_fns_dense<double>(&gemm_warp<double, 64>)}}},\n')
    end = header.index("    };\n}", header.index("stage_table()"))
    (tmp_path / "stages.h").write_text(header[:end] + row + header[end:])
    assert registry.stage_names(tmp_path / "stages.h")[-2:] == ["tensor", "warp"]
    assert registry.variants("warp", tmp_path / "stages.h") == ["64"]
    assert registry.entry_point_runs(tmp_path / "stages.h")[("gemm_warp", "double, 64")] == [("warp", "64", "double")]


def test_the_makefile_reads_the_stage_names_from_the_registry():
    out = subprocess.run([sys.executable, str(ROOT / "grader" / "scripts" / "registry.py"), "--stage-names"],
                         capture_output=True, text=True, check=True).stdout
    assert out.split() == registry.stage_names()
    assert "grader/scripts/registry.py --stage-names" in (ROOT / "Makefile").read_text()
