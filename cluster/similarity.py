"""similarity.py — the similarity report of a sweep (`make similarity SWEEP=final`).

Every pair of students' files of one stage is compared by copydetect (PyPI), a winnowing
fingerprint checker after MOSS: code is tokenized by Pygments' CUDA lexer, identifiers become one
letter (so renaming variables changes nothing), and fingerprints do not depend on where code sits in
the file (so reordering functions changes little). The handout's stub of each stage — the trusted
tree's student/<stage>.cu, the registry's stage files — is boilerplate: what every student was given
never counts as shared. The files compared are those of each student's attempt that counts, as the
sweep's plan.json names it.

Writes <sweep>/similarity/ (replaced as a whole, atomically):
  index.html      per stage, the most similar pairs and a plot of every pair's score
  top-pairs.csv   the same pairs: stage, rank, student_a, student_b, similarity, similarity_a,
                  similarity_b, matched_tokens, report (the stage's report when the pair is in it)
  <stage>.html    copydetect's report of the stage: pairs at or above [similarity] report_threshold
                  side by side, the shared code highlighted

A pair's similarity is the larger of the two shares: the part of student A's own code (stub left
out) that also appears in B's, and the part of B's that appears in A's. It says where to look, not
that anyone copied: read the pairs side by side.
"""
import datetime as dt
import json
import os
import secrets
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import staff_pages
from staff_pages import esc

import matplotlib.pyplot as plt  # noqa: E402  (after staff_pages chose the Agg backend)

CSV_COLUMNS = ["stage", "rank", "student_a", "student_b", "similarity", "similarity_a", "similarity_b",
               "matched_tokens", "report"]
FLAG_COLOR = "#d62728"   # pairs at or above the report threshold, in the plot and the tables
PAIR_COLOR = "#1f77b4"


class SimilarityError(Exception):
    """The report cannot be made; the message says why and what to do."""


@dataclass
class Pair:
    stage: str
    student_a: str
    student_b: str
    similarity_a: float   # share of A's code (stub left out) found in B's
    similarity_b: float
    matched_tokens: int

    @property
    def similarity(self) -> float:
        return max(self.similarity_a, self.similarity_b)


def _copydetect():
    try:
        import copydetect
    except ImportError:
        raise SimilarityError("copydetect is not installed for this Python; `make setup` installs it "
                              "(grader/scripts/requirements-staff.txt)") from None
    return copydetect


def hand_ins(sweep: Path) -> tuple[dict[str, Path], dict]:
    """student -> the files/ directory of their attempt that counts (from plan.json), and the plan."""
    try:
        plan = json.loads((sweep / "plan.json").read_text())
    except (OSError, ValueError):
        raise SimilarityError(f"{sweep}/plan.json is missing or unreadable: run the sweep first "
                              "(`make sweep SWEEP=<name>`)") from None
    out = {}
    for entry in plan.get("students", []):
        if entry.get("digest") and entry.get("attempt"):
            out[entry["student"]] = Path(entry["attempt"]) / "files"
    return out, plan


def compare_stage(stage_file: str, stub: Path, files: dict[str, Path], settings: dict,
                  report: Path | None) -> tuple[list[Pair], list[str]]:
    """Every pair of `files` (student -> path of their stage file) compared with the stub as
    boilerplate; the pairs sorted most similar first, and notes on files that could not be read.
    Writes copydetect's side-by-side report to `report` when given."""
    copydetect = _copydetect()
    stage = Path(stage_file).stem
    detector = copydetect.CopyDetector(
        noise_t=settings["noise_threshold"], guarantee_t=settings["guarantee_threshold"],
        display_t=settings["report_threshold"], autoopen=False, silent=True,
        out_file=str(report or Path(os.devnull).with_suffix(".html")))
    order = sorted(files)
    for student in order:
        detector.add_file(str(files[student]))
    detector.add_file(str(stub), "boilerplate")
    notes = []
    if len(order) >= 2:
        detector.run()
    pairs = []
    matrix, tokens = detector.similarity_matrix, detector.token_overlap_matrix
    index = {path: i for i, path in enumerate(detector.test_files)}
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            i, j = index[str(files[a])], index[str(files[b])]
            if len(order) < 2 or matrix[i, j][0] < 0:
                continue
            pairs.append(Pair(stage, a, b, float(matrix[i, j][0]), float(matrix[i, j][1]), int(tokens[i, j])))
    for student in order:
        if str(files[student]) not in detector.file_data and len(order) >= 2:
            notes.append(f"{stage}: {student}'s {stage_file} is not UTF-8 text; not compared")
    pairs.sort(key=lambda p: (-p.similarity, -p.matched_tokens, p.student_a, p.student_b))
    if report is not None and len(order) >= 2:
        with warnings.catch_warnings():  # copydetect 0.5 reads its template with a deprecated call
            warnings.simplefilter("ignore", DeprecationWarning)
            staff_pages.write_atomic(report, detector.generate_html_report(output_mode="return"))
    return pairs, notes


def run(cfg, sweep: Path, stage_files: list[str], say=print) -> Path:
    """Compare every stage of the sweep; returns the report directory."""
    copydetect = _copydetect()
    settings = {k: cfg.setting("similarity", k)
                for k in ("noise_threshold", "guarantee_threshold", "report_threshold", "top_pairs")}
    dirs, plan = hand_ins(sweep)
    if len(dirs) < 2:
        raise SimilarityError(f"{sweep}/plan.json names {len(dirs)} student(s) with an attempt that counts: "
                              "nothing to compare")
    tmp = sweep / f".similarity-tmp-{os.getpid()}-{secrets.token_hex(3)}"
    tmp.mkdir()
    try:
        by_stage, notes = {}, []
        for stage_file in stage_files:
            stage = Path(stage_file).stem
            files = {s: d / stage_file for s, d in dirs.items() if (d / stage_file).is_file()}
            missing = sorted(set(dirs) - set(files))
            if missing:
                notes.append(f"{stage}: no {stage_file} in the attempt of {', '.join(missing)}")
            stub = cfg.grader_dir / "student" / stage_file
            pairs, stage_notes = compare_stage(stage_file, stub, files, settings, tmp / f"{stage}.html")
            by_stage[stage] = pairs
            notes += stage_notes
            say(f"similarity: {stage}: {len(files)} file(s), {len(pairs)} pair(s), "
                + (f"most similar {pairs[0].student_a}–{pairs[0].student_b} {pairs[0].similarity:.0%}"
                   if pairs and pairs[0].similarity > 0 else "no code shared beyond the stub"))
        top = {stage: [p for p in pairs if p.similarity > 0][:settings["top_pairs"]]
               for stage, pairs in by_stage.items()}
        _write_csv(tmp / "top-pairs.csv", top, settings["report_threshold"])
        png = _plot(by_stage, settings["report_threshold"])
        staff_pages.write_atomic(tmp / "similarity.png", png)
        title = f"Similarity report: {cfg.course} / {sweep.name}"
        staff_pages.write_atomic(tmp / "index.html", staff_pages.page(title, _index_body(
            top, by_stage, settings, len(dirs), notes, png, copydetect.__version__, plan)))
        staff_pages.replace_dir(tmp, sweep / "similarity")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return sweep / "similarity"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _write_csv(path: Path, top: dict[str, list[Pair]], threshold: float):
    import csv
    import io
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for stage, pairs in top.items():
        for rank, p in enumerate(pairs, 1):
            w.writerow([stage, rank, p.student_a, p.student_b, f"{p.similarity:.3f}", f"{p.similarity_a:.3f}",
                        f"{p.similarity_b:.3f}", p.matched_tokens, f"{stage}.html" if p.similarity >= threshold else ""])
    staff_pages.write_atomic(path, out.getvalue())


def _plot(by_stage: dict[str, list[Pair]], threshold: float) -> bytes:
    """One row per stage: every pair's similarity as a dot; pairs at or above the threshold in red."""
    stages = list(by_stage)
    fig, ax = plt.subplots(figsize=(9, 0.7 * len(stages) + 1.6))
    for row, stage in enumerate(stages):
        pairs = by_stage[stage]
        for k, p in enumerate(pairs):
            jitter = ((k * 7919) % 11 - 5) / 40  # deterministic spread so equal scores stay visible
            flagged = p.similarity >= threshold
            ax.scatter([p.similarity], [row + jitter], s=60 if flagged else 18, zorder=3 if flagged else 2,
                       color=FLAG_COLOR if flagged else PAIR_COLOR, alpha=0.9 if flagged else 0.5)
    ax.axvline(threshold, color=FLAG_COLOR, linestyle="--", linewidth=1)
    ax.set_yticks(range(len(stages)), stages)
    ax.set_ylim(-0.7, len(stages) - 0.3)
    ax.invert_yaxis()  # the first stage on top, as on the page
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("similarity of a pair (share of a student's own code found in the other's)")
    ax.set_title(f"Every pair of students, per stage (dashed: report threshold {threshold:.0%})")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    png = staff_pages.png_bytes(fig)
    plt.close(fig)
    return png


def _index_body(top, by_stage, settings, n_students, notes, png, version, plan) -> str:
    threshold = settings["report_threshold"]
    parts = [
        f'<p>{n_students} students with an attempt that counts (sweep plan of {esc(plan.get("created", ""))}). '
        f"Files compared by copydetect {esc(version)} (winnowing; noise threshold "
        f"{settings['noise_threshold']}, guarantee threshold {settings['guarantee_threshold']}); the handout's "
        "stub of each stage is left out as boilerplate. A pair's similarity is the larger share of one "
        "student's own code that also appears in the other's. It tells where to look, not that anyone "
        "copied: open the stage's report and read the pair side by side.</p>",
        staff_pages.img(png, "similarity of every pair, per stage", "similarity-plot"),
    ]
    for stage, pairs in top.items():
        parts.append(f"<h2>{esc(stage)}</h2>")
        total = len(by_stage[stage])
        if not pairs:
            parts.append(f"<p>{total} pair(s) compared; none shares code beyond the stub.</p>")
            continue
        flagged = sum(p.similarity >= threshold for p in by_stage[stage])
        report = staff_pages.link(f"{stage}.html", f"{stage}.html") if flagged else "—"
        parts.append(f"<p>{total} pair(s) compared; {flagged} at or above {_pct(threshold)}, shown side "
                     f"by side in <a href=\"{esc(stage)}.html\">{esc(stage)}.html</a>.</p>" if flagged else
                     f"<p>{total} pair(s) compared; none at or above {_pct(threshold)}.</p>")
        rows = [[rank, p.student_a, p.student_b, _pct(p.similarity), _pct(p.similarity_a), _pct(p.similarity_b),
                 p.matched_tokens, report if p.similarity >= threshold else ""]
                for rank, p in enumerate(pairs, 1)]
        parts.append(staff_pages.table(
            ["#", "student A", "student B", "similarity", "of A's code", "of B's code", "matched tokens", "report"],
            rows, numeric=(0, 3, 4, 5, 6), row_class=lambda i, ps=pairs: "flag" if ps[i].similarity >= threshold else "",
            table_id=f"pairs-{stage}"))
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f'<p class="note">Written {stamp}. Staff only: this page names students.</p>')
    return "\n".join(parts)
