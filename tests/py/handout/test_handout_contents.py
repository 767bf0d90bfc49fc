"""What the handout leaves out, decided without building one: the staff's tools and developer scripts
never ship, the student's side of the cluster tool still imports without them, and the handout's
course.toml has no staff section (the similarity thresholds above all)."""
import ast
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "grader" / "scripts"))

import handout  # noqa: E402


def shipped():
    files, _ = handout.select_files(handout.load_config(ROOT / "course.toml"))
    return set(files)


def test_staff_tools_and_developer_scripts_stay_out():
    files = shipped()
    for rel in ("cluster/gradebook.py", "cluster/lms_export.py", "cluster/similarity.py", "cluster/leaderboard.py",
                "cluster/staff_pages.py", "cluster/templates/sweep-array.sbatch", "tests/gpu_session/cluster_gpu_demo.sh",
                "tests/gpu_session/cluster_gpu_jobs.sh", "tests/gpu_session/judge_agreement.py",
                "tests/py/support/cluster_helpers.py", "tests/py/support/private_accounts.py",
                "tests/py/support/staff_class.py", "tests/probes/judge_probe.cu", "tests/fixtures/cluster/plan.json",
                "tests/dropbox_gallery/README.md", "tests/dropbox_gallery/link-file/plant.sh",
                "tests/py/cluster/test_dropbox_gallery.py", "tests/py/cluster/test_dropbox_door.py"):
        assert rel not in files, rel
    for rel in ("cluster/gemmlab_cluster.py", "cluster/dropbox.py", "cluster/attempts.py", "cluster/class_files.py",
                "cluster/config.py", "cluster/attempt_records.py", "cluster/student_standing.py", "cluster/sweeps.py",
                "cluster/commands/__init__.py", "cluster/commands/common.py", "cluster/commands/student.py",
                "cluster/commands/decisions.py",
                "cluster/grading.py", "cluster/slurm.py", "cluster/scratch.py", "cluster/local_grading.py",
                "cluster/templates/grade-attempt.sbatch"):
        assert rel in files, rel


def test_the_folders_alone_decide_what_of_tests_ships():
    """What ships of tests/ is the folders SHIP names; what never ships is folders too: no test file is
    left out one by one (by the instructor-only text it holds), the staff's and developers' tests stay
    out, and a test added to a staff folder stays out with it; a helper beside conftest.py or a new
    support module ships only once SHIP names it."""
    files, left_out = handout.select_files(handout.load_config(ROOT / "course.toml"))
    assert [rel for rel, _ in left_out if rel.startswith("tests/")] == []
    never = [p for p in handout.NEVER if p.startswith("tests/")]
    assert never and all((ROOT / p).is_dir() for p in never), never
    staff = [p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts]
    for rel in staff:
        if rel.startswith(("tests/py/cluster/", "tests/py/handout/", "tests/py/submissions/", "tests/py/developer/",
                           "tests/gpu_session/", "tests/slurm/", "tests/gallery/", "tests/broken/")) \
                or (rel.startswith("tests/py/") and rel.count("/") == 2 and rel != "tests/py/conftest.py"):
            assert rel not in files, rel
    for rel in ("tests/py/conftest.py", "tests/py/grader/test_grader_cli.py", "tests/py/report/test_report.py",
                "tests/py/student/test_setup.py", "tests/py/harness/test_run_tests.py", "tests/run_tests.py"):
        assert rel in files, rel
    assert handout.matches("tests/py/cluster/test_a_new_staff_test.py", handout.NEVER)
    assert not handout.matches("tests/py/a_new_helper.py", handout.SHIP)
    assert not handout.matches("tests/py/support/a_new_helper.py", handout.SHIP)


def support_imports(path):
    """The modules of tests/py/support that the Python file `path` imports, each as its file under
    tests/py/support; an import in a `try` that goes on without it (except ImportError) is left out."""
    found = set()

    def visit(node):
        if isinstance(node, ast.Try) and any(isinstance(h.type, ast.Name) and h.type.id == "ImportError"
                                             for h in node.handlers):
            nodes = [*node.handlers, *node.orelse, *node.finalbody]
        else:
            nodes = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "support" + (f".{node.module}" if node.module else "") if node.level else node.module or ""
            names = [module] + [f"{module}.{a.name}" for a in node.names]
        else:
            names = []
        for name in names:
            if name == "support" or name.startswith("support."):
                found.add("__init__" if name == "support" else name.split(".")[1])
        for child in nodes:
            visit(child)
    visit(ast.parse(path.read_text()))
    support = ROOT / "tests" / "py" / "support"
    return {f"tests/py/support/{m}.py" for m in found if (support / f"{m}.py").is_file()} | \
        ({"tests/py/support/__init__.py"} if found else set())


def test_the_support_modules_that_shipped_tests_import_ship_and_no_other():
    """A shipped test that imports a support module finds it in the handout (SHIP names each), and a
    support module that no shipped test needs (the staff's class and accounts, the GPU tests'
    builds) stays out."""
    files = shipped()
    needed, todo = set(), [rel for rel in files if rel.startswith("tests/") and rel.endswith(".py")]
    while todo:
        for rel in support_imports(ROOT / todo.pop()) - needed:
            needed.add(rel)
            todo.append(rel)
    assert "tests/py/support/paths.py" in needed
    shipped_support = {rel for rel in files if rel.startswith("tests/py/support/")}
    assert sorted(needed - shipped_support) == [], "imported by a shipped test, missing from SHIP"
    assert sorted(shipped_support - needed) == [], "shipped, imported by no shipped test"


def test_the_developer_doc_never_ships_and_no_shipped_doc_sends_students_there():
    """docs/developing.md is for whoever changes the kit: it stays out even where a course lists it in
    [handout] docs, and neither the handout's README nor a file it ships names it."""
    cfg = handout.load_config(ROOT / "course.toml")
    cfg["docs"] = [*cfg["docs"], "developing.md"]
    files, _ = handout.select_files(cfg)
    assert "docs/developing.md" not in files
    readme = (ROOT / "grader" / "scripts" / "handout" / "README.md.in").read_text()
    assert "developing.md" not in readme
    for rel in sorted(shipped()):
        assert "developing.md" not in (ROOT / rel).read_text(errors="replace"), rel


def test_the_staff_docs_never_ship_and_the_student_guide_brings_its_parts():
    """The instructor guide's pages and the security page stay out even where a course lists them in
    [handout] docs; the student guide's tools page ships with the guide even where a course.toml written
    before the split lists the guide alone (the guide links to it)."""
    cfg = handout.load_config(ROOT / "course.toml")
    staff = sorted(p.name for p in (ROOT / "docs").glob("instructor-*.md")) + ["security.md"]
    assert {"instructor-guide.md", "instructor-setup.md", "instructor-term.md", "instructor-grading.md"} <= set(staff)
    files, _ = handout.select_files({**cfg, "docs": [*cfg["docs"], *staff]})
    assert not [f"docs/{doc}" for doc in staff if f"docs/{doc}" in files]
    files, _ = handout.select_files({**cfg, "docs": ["student-guide.md", "timing.md"]})
    assert {"docs/student-guide.md", "docs/student-tools.md", "docs/timing.md"} <= set(files)


def test_the_students_cluster_commands_run_without_the_staff_tools(tmp_path):
    """A copy of the shipped cluster/ alone: `status` and `submit --help` work; a staff command says
    it is not in the handout."""
    for rel in shipped():
        if rel.startswith(("cluster/", "grader/scripts/")):  # the drop box reads grader/scripts/fingerprint.py
            dst = tmp_path / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes((ROOT / rel).read_bytes())
    cfg = tmp_path / "course.toml"
    cfg.write_text(f'[cluster]\nscheduler = "local"\ndropbox = "{tmp_path}/box"\ngrader_root = "{ROOT}"\n')
    tool = [sys.executable, str(tmp_path / "cluster" / "gemmlab_cluster.py"), "--config", str(cfg)]
    r = subprocess.run(tool + ["status", "--user", "alice"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "no attempts of alice" in r.stdout, r.stdout + r.stderr
    r = subprocess.run(tool + ["gradebook"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "is a command of the course staff" in r.stderr, r.stderr


def test_the_handouts_course_toml_has_no_staff_section():
    text = handout.without_staff_sections((ROOT / "course.toml").read_text())
    doc = tomllib.loads(text)
    assert not set(doc) & set(handout.STAFF_SECTIONS), list(doc)
    assert {"course", "cluster", "deadline", "late", "bench", "scoring"} <= set(doc)
    assert "noise_threshold" not in text and "copydetect" not in text
    full = tomllib.loads((ROOT / "course.toml").read_text())
    assert doc["scoring"] == full["scoring"] and doc["cluster"] == full["cluster"]
