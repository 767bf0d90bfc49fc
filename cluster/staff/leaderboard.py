"""leaderboard.py — the opt-in class leaderboard of a sweep (`make leaderboard SWEEP=final`).

Who is on it: the students named in [leaderboard] aliases (a staff-kept TOML file, `student =
"alias"`, checked by class_files.load_aliases), shown by their alias only. What it ranks: for each
stage of [leaderboard] stages that the results name (so a stage the registry does not have, such as
"tensor" in results graded before that stage existed, is simply skipped) and each precision, the speed of the students' correct kernels
— score.stages of their graded results: disposition "passed", GFLOPS of the variant that counted, at
the first scoring shape. Each student has one place per stage and precision (the grader writes one
score row per stage x precision; were there several, the fastest would count), and a board of a
stage with variants (tiled, tensor) names the variant. Faster first; GFLOPS equal to 0.1 tie, and
the earlier hand-in (the time the gradebook shows) goes first.

Writes <sweep>/leaderboard/ (replaced as a whole): leaderboard.md, leaderboard.html (one file, the
plot embedded) and leaderboard.png. Nothing in them names a student: publish the directory as it is.
"""
import datetime as dt
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import fault_boundary
import staff_pages
from records import write_atomic
from staff_pages import esc

import matplotlib.pyplot as plt  # noqa: E402  (after staff_pages chose the Agg backend)
from matplotlib import ticker  # noqa: E402

BAR_COLOR = "#2ca02c"  # the leaderboard's bars (tests look for this colour in a screenshot)
PRECISIONS = ("float", "double")
LABEL = {"float": "FP32 (SGEMM)", "double": "FP64 (DGEMM)"}


@dataclass
class Place:
    place: int
    alias: str
    gflops: float
    pct_cublas: float
    variant: str
    handed_in: str  # ISO time of the attempt that counts (published as its day only)


@dataclass
class Board:
    stage: str
    precision: str
    places: list[Place]

    @property
    def title(self) -> str:
        return f"{self.stage}, {LABEL.get(self.precision, self.precision)}"

    @property
    def has_variants(self) -> bool:
        """Whether a place names the variant that counted (tiled's 8/16/32, tensor's fp16/tf32/3xtf32):
        then the board shows a variant column."""
        return any(p.variant for p in self.places)

    def headers(self) -> list[str]:
        return ["place", "alias", "GFLOPS", "% of cuBLAS"] + (["variant"] if self.has_variants else []) + ["handed in"]

    def cells(self, p: Place) -> list:
        return ([p.place, p.alias, f"{p.gflops:.1f}", f"{p.pct_cublas:.1f}"]
                + ([p.variant] if self.has_variants else []) + [_when(p.handed_in)])


@dataclass
class Standing:
    """What one row of the gradebook gives the leaderboard, read once (standing): the stages its results
    name, in their order; its scoring shape (None: its results name none); and — for a student who opted
    in and was graded on a GPU — their one entry per (stage, precision): the fastest correct kernel, as
    (GFLOPS to 0.1, handed in, alias, % of cuBLAS, variant)."""
    student: str
    stages: list[str]
    shape: str | None
    best: dict


def _order(e) -> tuple:
    """Faster first; equal speeds (to 0.1 GFLOPS): the earlier hand-in, then the alias."""
    return (-e[0], e[1], e[2])


def standing(row: dict, alias: str | None) -> Standing:
    """One student's Standing, from their gradebook row (its results' score.stages and config)."""
    results = row.get("_results") or {}
    rows = (results.get("score") or {}).get("stages") or []
    stages = []  # in the order the grader writes them (the registry's)
    for s in rows:
        if s.get("stage") not in stages:
            stages.append(s["stage"])
    shapes = (results.get("config") or {}).get("shapes") or []
    best = {}
    if alias is not None and row["status"] == "graded" and results:
        for s in rows:
            gflops = float(s.get("gflops") or 0)
            if s.get("disposition") == "passed" and gflops > 0:
                e = (round(gflops, 1), row.get("submitted_at") or "9999", alias, float(s.get("pct_cublas") or 0),
                     s.get("variant_used", "") or "")
                # The grader writes one row per stage x precision; should a results file hold several
                # (one per variant), the student still has one place: the fastest.
                key = (s.get("stage"), s.get("precision"))
                if key not in best or _order(e) < _order(best[key]):
                    best[key] = e
    return Standing(row["student"], stages, str(shapes[0].get("shape", "")) if shapes else None, best)


def standings(rows: list[dict], aliases: dict[str, str], cases: list | None = None) -> list[Standing]:
    """Each row's Standing. A row that cannot be read for it is that student's case (a Fault added to
    `cases`, for the staff: the pages never name a student) and on no board; the others are ranked as
    if nothing happened (fault_boundary)."""
    out = []
    for _, found, fault in fault_boundary.each(rows, lambda r: standing(r, aliases.get(r["student"])),
                                               what="their place on the leaderboard", student=lambda r: r["student"]):
        if fault is None:
            out.append(found)
        elif cases is not None:
            cases.append(fault)
    return out


def boards(rows: list[dict], aliases: dict[str, str], wanted: list[str], size: int,
           cases: list | None = None) -> tuple[list[Board], list[str]]:
    """One board per stage x precision, and notes on the stages left out (cases: as standings')."""
    return boards_of(standings(rows, aliases, cases), wanted, size)


def boards_of(ss: list[Standing], wanted: list[str], size: int) -> tuple[list[Board], list[str]]:
    """boards(), from the students' Standings."""
    present = []  # the stages the graded results name, in the order the grader writes them
    for st in ss:
        present += [s for s in st.stages if s not in present]
    notes = [f"{s}: no graded result of this class names this stage yet; left out"
             for s in wanted if s not in present]
    out = []
    for stage in [s for s in present if s in wanted]:
        for precision in PRECISIONS:
            best = {st.student: st.best[stage, precision] for st in ss if (stage, precision) in st.best}
            if not best:
                continue
            entries = sorted(best.values(), key=_order)
            out.append(Board(stage, precision, [Place(i + 1, e[2], e[0], e[3], e[4], e[1])
                                                for i, e in enumerate(entries[:size])]))
    return out, notes


def _when(iso: str) -> str:
    """The day of a hand-in, no finer: a time to the second could tell who is behind an alias in a
    small class (the order of equal speeds still follows the exact times)."""
    try:
        t = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d")


def _gflops_tick(value, _pos) -> str:
    """Axis labels that stay short at any speed: 850, 12k, 150k."""
    if abs(value) >= 1000:
        return f"{value / 1000:g}k"
    return f"{value:g}"


def plot(bs: list[Board]) -> bytes:
    """One panel per board: horizontal bars of GFLOPS, the fastest on top."""
    cols = len(PRECISIONS)
    stages = list(dict.fromkeys(b.stage for b in bs))
    if not stages:
        fig, ax = plt.subplots(figsize=(6, 1.2))
        ax.text(0.5, 0.5, "Nobody who opted in has a correct kernel of these stages yet.", ha="center", va="center")
        ax.set_axis_off()
        png = staff_pages.png_bytes(fig)
        plt.close(fig)
        return png
    fig, axes = plt.subplots(len(stages), cols, figsize=(5.2 * cols, 0.9 + 0.45 * max(
        (len(b.places) for b in bs), default=1) * len(stages) + 0.8 * len(stages)), squeeze=False)
    for row, stage in enumerate(stages):
        for col, precision in enumerate(PRECISIONS):
            ax = axes[row][col]
            board = next((b for b in bs if (b.stage, b.precision) == (stage, precision)), None)
            if board is None:
                ax.set_axis_off()
                ax.set_title(f"{stage}, {LABEL[precision]}: nobody yet")
                continue
            names = [f"{p.place}. {p.alias}" for p in board.places]
            ax.barh(range(len(names)), [p.gflops for p in board.places], color=BAR_COLOR)
            ax.set_yticks(range(len(names)), names)
            ax.invert_yaxis()
            ax.set_xlabel("GFLOPS")
            ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=5))
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(_gflops_tick))
            ax.set_title(board.title)
            ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    png = staff_pages.png_bytes(fig)
    plt.close(fig)
    return png


def markdown(title: str, bs: list[Board], notes: list[str], shape: str) -> str:
    lines = [f"# {title}", "",
             f"The fastest correct kernels of the students who opted in, by the alias they chose. Speed: "
             f"GFLOPS of the graded run at {shape}; equal speeds (to 0.1 GFLOPS) go to the earlier hand-in "
             f"(the day is shown).", "",
             "![GFLOPS per stage and precision](leaderboard.png)", ""]
    for b in bs:
        heads = b.headers()
        align = ["---:" if h in ("place", "GFLOPS", "% of cuBLAS") else "---" for h in heads]
        lines += [f"## {b.title}", "", "| " + " | ".join(heads) + " |", "|" + "|".join(align) + "|"]
        lines += ["| " + " | ".join(str(c) for c in b.cells(p)) + " |" for p in b.places]
        lines.append("")
    if not bs:
        lines += ["Nobody who opted in has a correct kernel of these stages yet.", ""]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    return "\n".join(lines)


def html_page(title: str, bs: list[Board], notes: list[str], shape: str, png: bytes) -> str:
    parts = [f"<p>The fastest correct kernels of the students who opted in, by the alias they chose. Speed: "
             f"GFLOPS of the graded run at {esc(shape)}; equal speeds (to 0.1 GFLOPS) go to the earlier "
             "hand-in.</p>", staff_pages.img(png, "GFLOPS per stage and precision", "leaderboard-plot")]
    for b in bs:
        parts.append(f"<h2>{esc(b.title)}</h2>")
        parts.append(staff_pages.table(b.headers(), [b.cells(p) for p in b.places],
                                       numeric=(0, 2, 3), table_id=f"board-{b.stage}-{b.precision}"))
    if not bs:
        parts.append("<p>Nobody who opted in has a correct kernel of these stages yet.</p>")
    if notes:
        parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return staff_pages.page(title, "\n".join(parts))


def scoring_shape(ss: list[Standing]) -> str:
    return next((st.shape for st in ss if st.shape is not None), "the first scoring shape")


def write(sweep: Path, rows: list[dict], aliases: dict[str, str], wanted: list[str], size: int,
          title: str, cases: list | None = None) -> tuple[Path, list[Board], list[str]]:
    """The leaderboard's pages (cases: as standings')."""
    ss = standings(rows, aliases, cases)
    bs, notes = boards_of(ss, wanted, size)
    shape = scoring_shape(ss)
    png = plot(bs)
    tmp = sweep / f".leaderboard-tmp-{os.getpid()}-{secrets.token_hex(3)}"
    tmp.mkdir()
    final = sweep / "leaderboard"
    try:
        write_atomic(tmp / "leaderboard.png", png)
        write_atomic(tmp / "leaderboard.md", markdown(title, bs, notes, shape))
        write_atomic(tmp / "leaderboard.html", html_page(title, bs, notes, shape, png))
        os.chmod(tmp, 0o755)
        for p in tmp.iterdir():
            os.chmod(p, 0o644)  # to be published: readable by all (the sweep around it stays staff-only)
        staff_pages.replace_dir(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final, bs, notes
