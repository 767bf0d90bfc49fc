"""The similarity report (`make similarity`) on synthetic classes with planted copies.

The class (solutions in tests/fixtures/similarity/, spliced into the handout's stubs):
  tiled:    ana textbook; ben = ana's with every name changed, helpers reordered, comments
            rewritten; cat and dan honest, different solutions; rex hands in the instructor's
            reference/tiled.cu; the others hand in the stub
  unrolled: eve outer product; fay = eve's, renamed and reordered; ana and gil honest, different;
            the others hand in the stub
  hal hands in the stubs only; ivy is on the roster and hands in nothing.
The planted pairs must come out on top of their stage, far above every honest pair, and students who
handed in the same untouched stub must not be paired at all (the stub is boilerplate). A second
class: five students hand in one tiled file (one group of five), and one hands in the file a
student of an earlier term handed in (found in the archive, [similarity] archive).
"""
import csv
import re
import subprocess
import sys

import pytest

from support import staff_class
from support.staff_class import ROOT

pytest.importorskip("copydetect", reason="copydetect is not installed: `make setup` installs it")

import dropbox  # noqa: E402  (cluster/, on sys.path through staff_class)
import similarity  # noqa: E402

CLASS = {
    "ana": {"tiled": "tiled_textbook", "unrolled": "unrolled_transposed_a"},
    "ben": {"tiled": "tiled_textbook_copied"},
    "cat": {"tiled": "tiled_pointer_walk"},
    "dan": {"tiled": "tiled_fma_padded"},
    "eve": {"unrolled": "unrolled_outer_product"},
    "fay": {"unrolled": "unrolled_outer_product_copied"},
    "gil": {"unrolled": "unrolled_acc4_rows"},
    "hal": {},
    "rex": {},  # hands in reference/tiled.cu as it is
}
PLANTED = {"tiled": ("ana", "ben"), "unrolled": ("eve", "fay")}
REFERENCE_TILED = (ROOT / "reference" / "tiled.cu").read_text()


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    base = tmp_path_factory.mktemp("similarity")
    cfg_path = staff_class.write_config(base, roster=[*CLASS, "ivy"])
    cfg = staff_class.load(cfg_path)
    for student, solutions in CLASS.items():
        staff_class.hand_in(cfg, base, student, solutions, texts={"tiled": REFERENCE_TILED} if student == "rex" else None)
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return cfg, sweep, r.stdout


def read_csv(sweep, name):
    with open(sweep / "similarity" / name) as f:
        return list(csv.DictReader(f))


def test_planted_copies_rank_first_and_honest_pairs_stay_low(swept):
    _, sweep, out = swept
    rows = [r for r in read_csv(sweep, "pairs.csv") if "student" == r["kind_a"] == r["kind_b"]]
    assert list(rows[0]) == similarity.PAIR_COLUMNS
    for stage, pair in PLANTED.items():
        ranked = [r for r in rows if r["stage"] == stage]
        first = ranked[0]
        assert (first["a"], first["b"]) == pair, ranked
        assert float(first["similarity"]) >= 0.8, first
        assert float(first["similarity_a"]) >= 0.8 and float(first["similarity_b"]) >= 0.8, first
        honest = [r for r in ranked[1:] if "rex" not in (r["a"], r["b"])]
        assert honest, f"{stage}: the honest pairs should be listed below the copy"
        assert max(float(r["similarity"]) for r in honest) <= 0.5, honest
        assert all(r["group"] == "" for r in honest), honest
        assert f": {pair[0]}, {pair[1]} (up to " in out, out


def test_each_planted_copy_is_one_group_of_two(swept):
    _, sweep, _ = swept
    groups = {(g["stage"], g["members"]): g for g in read_csv(sweep, "groups.csv")}
    assert list(next(iter(groups.values()))) == similarity.GROUP_COLUMNS
    for stage, pair in PLANTED.items():
        g = groups[(stage, " ".join(pair))]
        assert (g["size"], g["students"]) == ("2", "2") and float(g["similarity"]) >= 0.8, g


def test_a_hand_in_of_the_reference_is_flagged_against_reference(swept):
    """rex copied nobody in the class, only the instructor's solution: a group of rex and "reference"."""
    _, sweep, _ = swept
    groups = [g for g in read_csv(sweep, "groups.csv") if "rex" in g["members"].split()]
    assert [(g["stage"], g["members"], g["students"]) for g in groups] == [("tiled", "rex reference", "1")], groups
    pair = next(r for r in read_csv(sweep, "pairs.csv") if (r["a"], r["b"]) == ("rex", "reference"))
    assert (pair["stage"], pair["kind_b"]) == ("tiled", "reference") and float(pair["similarity"]) > 0.95, pair
    assert pair["page"] == "tiled/rex--reference.html"
    # nobody else is near the reference: honest solutions are not flagged against it
    near = [r for r in read_csv(sweep, "pairs.csv") if r["b"] == "reference" and r["a"] != "rex"]
    assert all(r["group"] == "" for r in near), near


def test_the_stub_is_boilerplate(swept):
    """hal, and everyone who did not touch a stage, hand in the same stub: no pair, no score."""
    _, sweep, _ = swept
    rows = read_csv(sweep, "pairs.csv")
    assert all(float(r["similarity"]) > 0 for r in rows)
    assert not any("hal" in (r["a"], r["b"]) for r in rows)
    assert not [r for r in rows if r["stage"] in ("naive", "pitched", "reuse")], rows
    tiled = {(r["a"], r["b"]) for r in rows if r["stage"] == "tiled"}
    assert ("eve", "fay") not in tiled and ("fay", "gil") not in tiled  # both handed in the tiled stub


def test_a_stage_the_handout_gives_complete_is_not_compared(swept):
    """naive's stub is the finished baseline (no TODO(student): task): no stage of its own in the report
    (a hand-in's naive.cu that differs from it is compared with every stage: the third class below)."""
    _, sweep, out = swept
    assert "naive: given complete in the handout" in out
    index = (sweep / "similarity" / "index.html").read_text()
    assert 'id="stage-naive"' not in index and "Not compared as stages of their own: naive" in index
    assert 'id="stage-tiled"' in index and 'id="stage-pitched"' in index
    assert not [r for r in read_csv(sweep, "pairs.csv") + read_csv(sweep, "groups.csv") if r["stage"] == "naive"]


def test_without_the_stub_as_boilerplate_stubs_would_match(swept, tmp_path):
    """The control: the same comparison with an empty boilerplate file pairs identical stubs at 100 %,
    so the test above proves the stub is what keeps them apart."""
    cfg, sweep, _ = swept
    files, _ = similarity.hand_ins(sweep)
    empty = tmp_path / "empty.cu"
    empty.write_text("\n")
    handout = {"tiled.cu": f"// {similarity.TODO_TAG} a stage to compare\n".encode()}  # nobody's file is this
    settings = {k: cfg.setting("similarity", k) for k in ("noise_threshold", "guarantee_threshold", "report_threshold")}
    entries = [similarity.staged(tmp_path / "hand-ins", s, files[s].stage_bytes(), handout, 25)["tiled.cu"]
               for s in ("eve", "fay", "hal")]
    result = similarity.compare_stage("tiled.cu", [empty], entries, settings)
    assert len(result.pairs) == 3 and min(p.similarity for p in result.pairs) > 0.95
    assert [[e.label for e in g] for g in result.groups] == [["eve", "fay", "hal"]]


def test_reports_are_written(swept):
    _, sweep, _ = swept
    out = sweep / "similarity"
    index = (out / "index.html").read_text()
    assert 'id="similarity-plot"' in index and 'id="pairs-tiled-1"' in index and 'id="pairs-unrolled-1"' in index
    for stage, (a, b) in PLANTED.items():
        page = f"{stage}/{a}--{b}.html"
        assert f'href="{page}"' in index  # each pair links to its own page, not the stage's
        html = (out / page).read_text()
        assert f"/{a}+" in html and f"/{b}+" in html  # the pair, side by side (each in its own folder)
        assert "highlight-red" in html and "highlight-green" in html
        assert html.count("<pre>") == 2
    pages = sorted(p.relative_to(out).as_posix() for p in out.glob("*/*.html"))
    assert pages == ["tiled/ana--ben.html", "tiled/rex--reference.html", "unrolled/eve--fay.html"], pages
    assert (out / "similarity.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(sweep.glob(".similarity-*"))


def test_the_report_is_the_same_each_time(swept):
    """The tool fixes Python's string hash (copydetect's fingerprints depend on it)."""
    cfg, sweep, _ = swept
    before = [(sweep / "similarity" / n).read_text() for n in ("pairs.csv", "groups.csv")]
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg.path),
                        "similarity", "--sweep", str(sweep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [(sweep / "similarity" / n).read_text() for n in ("pairs.csv", "groups.csv")] == before


# ---- a second class: a group of five, and an earlier term's hand-in --------------------------------
FIVE = ["p1", "p2", "p3", "p4", "p5"]


@pytest.fixture(scope="module")
def with_archive(tmp_path_factory):
    """p1..p5 hand in one tiled file (tiled_fma_padded); zoe hands in tiled_pointer_walk, which old
    handed in last term (an archived drop box, 2025-fall/dropbox); una hands in something of her own."""
    base = tmp_path_factory.mktemp("archive")
    last_term = base / "2025-fall"
    last_term.mkdir()
    old_cfg = staff_class.load(staff_class.write_config(last_term, roster=["old", "other"]))
    staff_class.hand_in(old_cfg, last_term, "old", {"tiled": "tiled_pointer_walk"})
    staff_class.hand_in(old_cfg, last_term, "other", {"unrolled": "unrolled_acc4_rows"})
    now = base / "2026-fall"
    now.mkdir()
    cfg_path = staff_class.write_config(now, f'[similarity]\narchive = ["{last_term}/dropbox"]\n',
                                        roster=[*FIVE, "zoe", "una"])
    cfg = staff_class.load(cfg_path)
    for student in FIVE:
        staff_class.hand_in(cfg, now, student, {"tiled": "tiled_fma_padded"})
    staff_class.hand_in(cfg, now, "zoe", {"tiled": "tiled_pointer_walk"})
    staff_class.hand_in(cfg, now, "una", {"tiled": "tiled_textbook"})
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return cfg, sweep


def test_five_students_sharing_a_file_are_one_group(with_archive):
    _, sweep = with_archive
    groups = [g for g in read_csv(sweep, "groups.csv") if g["stage"] == "tiled"]
    five = [g for g in groups if set(FIVE) & set(g["members"].split())]
    assert [(g["members"], g["size"], g["students"]) for g in five] == [(" ".join(FIVE), "5", "5")], groups
    pairs = [r for r in read_csv(sweep, "pairs.csv") if r["group"] == five[0]["group"] and r["stage"] == "tiled"]
    assert len(pairs) == 10  # every pair is in pairs.csv; the index shows top_pairs of them, each with a page
    index = (sweep / "similarity" / "index.html").read_text()
    table = index.split(f'id="pairs-tiled-{five[0]["group"]}"')[1].split("</table>")[0]
    assert table.count("<tr") == 1 + 10 and table.count("side by side") == 10
    assert len(list((sweep / "similarity" / "tiled").glob("p*--p*.html"))) == 10


def test_top_pairs_bounds_the_pairs_shown_in_a_group_not_the_groups(with_archive, tmp_path):
    cfg, sweep = with_archive
    text = cfg.path.read_text().replace("[similarity]\n", "[similarity]\ntop_pairs = 3\n")
    small = cfg.path.with_name("course-top3.toml")
    small.write_text(text)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(small),
                        "similarity", "--sweep", str(sweep)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    groups = read_csv(sweep, "groups.csv")
    assert len(groups) == 2  # the five, and zoe with last term's hand-in: every group is shown
    index = (sweep / "similarity" / "index.html").read_text()
    group = next(g["group"] for g in groups if g["size"] == "5")
    table = index.split(f'id="pairs-tiled-{group}"')[1].split("</table>")[0]
    assert table.count("<tr") == 1 + 3 and "the 3 most similar of its 10 pairs" in index
    assert sum(1 for r in read_csv(sweep, "pairs.csv") if r["page"]) == 3 + 1


def test_an_archived_hand_in_is_matched(with_archive):
    _, sweep = with_archive
    groups = [g for g in read_csv(sweep, "groups.csv") if "zoe" in g["members"].split()]
    assert [(g["stage"], g["members"], g["students"]) for g in groups] == [
        ("tiled", "zoe 2025-fall/dropbox/old", "1")], groups
    pair = next(r for r in read_csv(sweep, "pairs.csv") if r["a"] == "zoe" and r["kind_b"] == "archive")
    assert pair["b"] == "2025-fall/dropbox/old" and float(pair["similarity"]) > 0.95, pair
    html = (sweep / "similarity" / pair["page"]).read_text()
    assert "/2025-fall/dropbox/old+" in html and "an earlier term" in html
    # the archive is compared with this term's students only, never with itself; una copied nobody
    rows = read_csv(sweep, "pairs.csv")
    assert not [r for r in rows if r["kind_a"] != "student"]
    assert not [g for g in read_csv(sweep, "groups.csv") if "una" in g["members"].split()]


def test_the_archive_key_is_checked(tmp_path):
    cfg = staff_class.load(staff_class.write_config(tmp_path, roster=["ana"]))
    staff_class.hand_in(cfg, tmp_path, "ana", {"tiled": "tiled_textbook"})
    staff_class.plan(cfg)
    for value, want in (('["nowhere"]', f"{tmp_path}/nowhere does not exist"),
                        ('"one/path"', "should be a list of strings")):
        cfg_path = staff_class.write_config(tmp_path, f"[similarity]\narchive = {value}\n", roster=["ana"])
        r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                            "similarity", "--name", "final"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "[similarity] archive" in r.stderr and want in r.stderr, r.stderr
    (tmp_path / "empty").mkdir()
    cfg = staff_class.load(staff_class.write_config(tmp_path, '[similarity]\narchive = ["empty"]\n'))
    with pytest.raises(staff_class.config.ConfigError, match="neither a sweep directory .* nor a drop box"):
        cfg.similarity_archive()


def test_no_sweep_is_named(tmp_path):
    cfg_path = staff_class.write_config(tmp_path)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "midterm"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "midterm has no plan.json" in r.stderr and "make sweep SWEEP=midterm" in r.stderr


# ---- a third class: copies put where a report by stage file would not look ------------------------
# ana's tiled kernel (tiled_textbook) is copied by four students, each hiding it elsewhere than in the
# stage file a report of stage files alone compares with ana's; grading compiles and runs every copy.
#   kit: in helpers.cu, a .cu file that is no stage's (`make submit` refuses it; a student who stores
#        an attempt with a client of their own does not), whose launcher tiled.cu calls by name;
#   lea: appended to naive.cu, the stage the handout gives complete, and called the same way;
#   mo:  in tiled.cu itself, as the bodies of two macros (a #define is one preprocessor token to the lexer);
#   nia: in tiled.cu itself, renamed (tiled_textbook_copied), with one byte that is not UTF-8 in a comment.
# cat and dan are honest; hal hands in the stubs; ivo changes a comment of naive.cu and nothing else.
HIDDEN = (staff_class.PARTS / "tiled_hidden.cu").read_text()
HIDERS = ["kit", "lea", "mo", "nia"]


def calls_elsewhere() -> str:
    """The tiled stub whose gemm_tiled only calls tiled_elsewhere, defined in another file (HIDDEN)."""
    stub = (ROOT / "student" / "tiled.cu").read_text()
    out, n1 = re.subn(r"(template <typename T, int TILE>\nStatus gemm_tiled)",
                      "template <typename T, int TILE>\nStatus tiled_elsewhere(const GemmProblem<T>& p);\n\n\\1", stub)
    out, n2 = re.subn(r"    if \(!kTiledKernelWritten\).*?    return Status::ok;\n",
                      "    return tiled_elsewhere<T, TILE>(p);\n", out, flags=re.S)
    assert (n1, n2) == (1, 1), "the stub of tiled changed shape: update calls_elsewhere"
    return out


def store(cfg, base, student: str, texts: dict[str, bytes]) -> None:
    """An attempt of the handout's stubs with `texts` {file name: bytes} instead or besides, stored as
    it is, the way a student's own client can (dropbox.collect, which refuses extra files, is the
    handout's client)."""
    src = base / "hand-ins" / student
    src.mkdir(parents=True)
    for name in sorted({*staff_class.STAGE_FILES, *texts}):
        (src / name).write_bytes(texts.get(name) or (ROOT / "student" / name).read_bytes())
    dropbox.store_attempt(cfg, student, {p.name: p for p in src.iterdir()})


@pytest.fixture(scope="module")
def hidden(tmp_path_factory):
    base = tmp_path_factory.mktemp("hidden")
    cfg_path = staff_class.write_config(base, roster=["ana", *HIDERS, "cat", "dan", "hal", "ivo"])
    cfg = staff_class.load(cfg_path)
    naive = (ROOT / "student" / "naive.cu").read_bytes()
    copied = staff_class.splice("tiled", "tiled_textbook_copied").encode()
    texts = {
        "ana": {"tiled.cu": staff_class.splice("tiled", "tiled_textbook").encode()},
        "kit": {"tiled.cu": calls_elsewhere().encode(), "helpers.cu": HIDDEN.encode()},
        "lea": {"tiled.cu": calls_elsewhere().encode(), "naive.cu": naive + b"\n" + HIDDEN.encode()},
        "mo": {"tiled.cu": staff_class.splice("tiled", "tiled_textbook_in_macros").encode()},
        "nia": {"tiled.cu": copied.replace(b"// my tiled kernel", b"// my tiled kernel (r\xe9sum\xe9)", 1)},
        "cat": {"tiled.cu": staff_class.splice("tiled", "tiled_pointer_walk").encode()},
        "dan": {"tiled.cu": staff_class.splice("tiled", "tiled_fma_padded").encode()},
        "hal": {},
        "ivo": {"naive.cu": naive.replace(b"// beta == 0 must not read C", b"// beta == 0: never read C", 1)},
    }
    assert texts["nia"]["tiled.cu"] != copied and texts["ivo"]["naive.cu"] != naive
    for student, files in texts.items():
        store(cfg, base, student, files)
    sweep = staff_class.plan(cfg)
    r = subprocess.run([sys.executable, str(ROOT / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg_path),
                        "similarity", "--name", "final"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return sweep, r.stdout


def test_a_copy_hidden_outside_the_stage_file_is_found(hidden):
    """Each hider is in one tiled group with ana, each pair far above the honest ones."""
    sweep, out = hidden
    rows = [r for r in read_csv(sweep, "pairs.csv") if r["stage"] == "tiled"]
    found = {r["a"] if r["b"] == "ana" else r["b"]: r for r in rows if "ana" in (r["a"], r["b"])}
    for student in HIDERS:
        assert student in found and float(found[student]["similarity"]) >= 0.8, (student, found.get(student))
    groups = [g for g in read_csv(sweep, "groups.csv") if g["stage"] == "tiled"]
    assert [set(g["members"].split()) for g in groups] == [{"ana", *HIDERS}], groups
    honest = [r for r in rows if {r["a"], r["b"]} & {"cat", "dan"}]
    assert honest and max(float(r["similarity"]) for r in honest) <= 0.5, honest
    assert "not UTF-8" in (sweep / "similarity" / "index.html").read_text()


def test_the_files_every_stage_can_call_into_are_named(hidden):
    """kit's extra file and lea's changed naive.cu are compared with every stage, and said so: in the
    index's notes and on the pair's page."""
    sweep, _ = hidden
    index = (sweep / "similarity" / "index.html").read_text()
    assert "kit" in index and "helpers.cu" in index
    pair = next(r for r in read_csv(sweep, "pairs.csv") if r["stage"] == "tiled" and {r["a"], r["b"]} == {"ana", "kit"})
    html = (sweep / "similarity" / pair["page"]).read_text()
    assert "helpers.cu" in html and "elsewhere_kernel" in html
    pair = next(r for r in read_csv(sweep, "pairs.csv") if r["stage"] == "tiled" and {r["a"], r["b"]} == {"ana", "lea"})
    assert "naive.cu" in (sweep / "similarity" / pair["page"]).read_text()


def test_a_given_file_is_compared_only_when_changed(hidden):
    """hal's naive.cu is the handout's: in no pair. ivo changed one comment of it: nothing of his own
    is code, so he is in no group either. The naive stage itself is no stage of its own in the report."""
    sweep, out = hidden
    rows = read_csv(sweep, "pairs.csv")
    assert not [r for r in rows if "hal" in (r["a"], r["b"])]
    assert not [g for g in read_csv(sweep, "groups.csv") if "ivo" in g["members"].split()]
    assert not [r for r in rows if r["stage"] == "naive"]
