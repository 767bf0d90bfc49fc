"""similarity.py — the similarity report of a sweep (`make similarity SWEEP=final`).

Each stage's code is compared by copydetect (PyPI), a winnowing fingerprint checker after MOSS:
code is tokenized by Pygments' CUDA lexer, identifiers become one letter (so renaming variables
changes nothing), and fingerprints do not depend on where code sits in the file (so reordering
functions changes little). Compared, stage by stage:
  * every student's code of the stage, in the attempt that counts (as the sweep's plan.json names it),
    with every other student's;
  * every student's with the instructor's solution, reference/<stage>.cu of the trusted tree
    (a student who hands in the reference, or a close copy, is found even if nobody else copied it);
  * every student's with the hand-ins of earlier terms, [similarity] archive (a drop box, each
    student's latest attempt not withdrawn; or a sweep directory, each attempt its plan counted).
    The reference and the archive are compared with the students only, never with each other.

A hand-in's code of a stage is everything the stage can run. Grading compiles every .cu file of the
hand-in and links each stage with the files its file calls into by name (the symbol check's closure,
docs/ARCHITECTURE.md); without a build, the report takes a superset of that closure: the stage's file
and, appended to it, every file of the hand-in that no stage is compared by — a .cu file that is no
stage's (`make submit` hands in none; an attempt stored otherwise can hold one), and the file of a
stage the handout gives complete (its stub has no TODO(student): task, like the naive baseline) where
it differs from the stub. Such a file counts toward every stage (see common_files). A stage's file
calling into another stage's file is not followed: that file is compared in its own stage.
What the compiler reads as code is compared as code: the body of a #define (one preprocessor token to
the lexer) is set on lines of its own, and bytes that are not UTF-8 are replaced, not a reason to
leave a file out (see comparable).

Each hand-in's code is written, tokenized and fingerprinted in a cell of its own (cell.py, with the
course's [cells] limits: see prepared); the pairs are compared from those fingerprints. A hand-in that
runs its cell into a limit, or that cannot be read, is its student's case, named first in the notes
and on the terminal; the others are compared as they would be without it (fault_boundary.py).

The handout's stubs are boilerplate: what every student was given never counts as shared — the
stage's stub, and the stubs of the stages given complete. A hand-in whose code of a stage is the
stage's stub and nothing else is not compared in that stage.

Hand-ins connected by similarity at or above [similarity] report_threshold form one group (the
connected components of those pairs): five students who share one file are one group of five, not
ten rows. Every group is shown; top_pairs bounds the pairs shown inside a group.

Writes <sweep>/similarity/ (replaced as a whole, atomically):
  index.html      per stage, its groups, each with its most similar pairs, and a plot of every pair
  groups.csv      stage, group, size, students, members, similarity (the group's highest pair)
  pairs.csv       every pair that shares code beyond the stubs: stage, group (if in one), a, kind_a,
                  b, kind_b, similarity, similarity_a, similarity_b, matched_tokens, page
  <stage>/<a>--<b>.html   one pair side by side, the shared code highlighted (each pair shown in a group)

A pair's similarity is the larger of the two shares: the part of A's own code (stubs left out) that
also appears in B's, and the part of B's that appears in A's. It says where to look, not that
anyone copied: read the pair side by side.
"""
import datetime as dt
import json
import os
import re
import secrets
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import cell
import fault_boundary
import staff_pages
from records import escaped, write_atomic
from staff_pages import esc

import matplotlib.pyplot as plt  # noqa: E402  (after staff_pages chose the Agg backend)
import numpy as np  # noqa: E402  (matplotlib's and copydetect's)

PAIR_COLUMNS = ["stage", "group", "a", "kind_a", "b", "kind_b", "similarity", "similarity_a", "similarity_b",
                "matched_tokens", "page"]
GROUP_COLUMNS = ["stage", "group", "size", "students", "members", "similarity"]
FLAG_COLOR = "#d62728"   # pairs at or above the report threshold, in the plot and the tables
PAIR_COLOR = "#1f77b4"
TODO_TAG = "TODO(student):"  # the one tag of student tasks (grader/scripts/handout.py): a stub without it is complete
REFERENCE = "reference"      # the label of the instructor's solution
# Line splices (a backslash ending a line), and a #define's name and parameters with its body on the same line.
SPLICE_RE = re.compile(r"\\[ \t]*\r?\n")
DEFINE_RE = re.compile(r"^([ \t]*#[ \t]*define[ \t]+[A-Za-z_]\w*(?:\([^)\n]*\))?)[ \t]*(?=\S)", re.M)


class SimilarityError(Exception):
    """The report cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class Entry:
    """One file compared: a student's (label: the user name), the reference's, or an archived one
    (label: <archive>/<user>, never a user name)."""
    label: str
    kind: str     # "student", "reference" or "archive"
    path: Path    # the code compared (a hand-in's: the door's checked bytes, as comparable() writes them)
    origin: Path | None = None  # where a hand-in's stage file lies in the drop box, for the pages
    common: tuple[str, ...] = ()  # the hand-in's files appended to the stage's (common_files)
    as_handed_out: bool = False   # its code of the stage is the stage's stub, byte for byte, and nothing else


@dataclass
class Pair:
    stage: str
    a: Entry
    b: Entry
    similarity_a: float   # share of A's code (stub left out) found in B's
    similarity_b: float
    matched_tokens: int
    slices_a: object = None   # where the shared code is, in A's and B's text (copydetect's slices)
    slices_b: object = None
    group: int = 0            # the group it belongs to (0: none)
    page: str = ""            # its side-by-side page, relative to the report directory

    @property
    def similarity(self) -> float:
        return max(self.similarity_a, self.similarity_b)


@dataclass
class StageResult:
    stage: str
    pairs: list[Pair]                     # every pair compared, most similar first
    groups: list[list[Entry]] = field(default_factory=list)
    code: dict = field(default_factory=dict)   # path -> the text copydetect compared
    notes: list[str] = field(default_factory=list)
    students: int = 0                     # students' files compared
    as_stub: int = 0                      # students whose code of the stage is its stub (not compared)


def _copydetect():
    try:
        import copydetect
    except ImportError:
        raise SimilarityError("copydetect is not installed for this Python; `make setup` installs it "
                              "(grader/scripts/requirements-staff.txt)") from None
    return copydetect


def hand_ins(sweep: Path, cases: list | None = None) -> tuple[dict, dict]:
    """student -> their attempt that counts (from plan.json), read through the drop box's door
    (attempts.py: its stage_bytes() are what is compared), and the plan. An attempt that cannot be read, or whose
    files are no longer those the sweep planned, is left out (the sweep made it a case already), and
    named in `cases` (each a line for the report's notes)."""
    try:
        plan = json.loads((sweep / "plan.json").read_text())
    except (OSError, ValueError):
        raise SimilarityError(f"{sweep}/plan.json is missing or unreadable: run the sweep first "
                              "(`make sweep SWEEP=<name>`)") from None
    out = {}
    planned = [e for e in plan.get("students", []) if e.get("digest") and e.get("attempt")]
    for entry, a, fault in fault_boundary.each(planned, _planned_attempt, what="reading the attempt the sweep planned",
                                               student=lambda e: e["student"]):
        if fault is None:
            out[entry["student"]] = a
        elif cases is not None:
            cases.append(f"{fault}: not compared")
    return out, plan


def _planned_attempt(entry: dict):
    """The attempt a plan's entry names, read through the door; a Case where its files are no longer
    those the sweep planned."""
    import attempts
    a = attempts.at(Path(entry["attempt"]))
    if a.digest != entry["digest"]:
        raise attempts.Case(a.problem or f"{a.where}: its files are no longer those the sweep planned")
    return a


def archive_hand_ins(archive: list[tuple[Path, str]]) -> tuple[dict, list[str]]:
    """<archive>/<user> -> an earlier term's hand-in (attempts.Attempt), and notes. A
    sweep directory gives the attempt its plan counted; a drop box each user's latest attempt not
    withdrawn (read through the door, attempts.py, like this term's). <archive> is the directory's
    last two path components (e.g. 2025-fall/dropbox)."""
    import attempts
    out, notes, names = {}, [], set()
    for path, layout in archive:
        name = "/".join(path.resolve().parts[-2:])
        while name in names:
            name += "+"
        names.add(name)
        if layout == "sweep":
            dirs, plan = hand_ins(path)
            gone = sorted({e["student"] for e in plan.get("students", []) if e.get("digest")} - set(dirs))
        else:
            dirs, gone = {}, []
            folders = attempts.folders_in(path)
            for user, latest, fault in fault_boundary.each(sorted(folders), lambda user: _latest(path / folders[user]),
                                                           what="reading their hand-ins"):
                if fault is not None:
                    notes.append(f"archive {path}: {fault}: not compared")
                elif latest is not None:
                    dirs[user] = latest
        if gone:
            notes.append(f"archive {path}: the hand-ins of {', '.join(gone)} are no longer where its plan says")
        out.update({f"{name}/{s}": d for s, d in dirs.items()})
    return out, notes


def _latest(student_dir: Path):
    """A drop box student's latest attempt not withdrawn and intact, if it holds a stage file; else None."""
    import attempts
    kept = [a for a in attempts.in_directory(student_dir) if not a.withdrawn and not a.problem]
    return kept[-1] if kept and kept[-1].stage_bytes() else None


def given_complete(stub: bytes) -> bool:
    """The handout gives this stage complete (the naive baseline): its stub carries no student task."""
    return TODO_TAG.encode() not in stub


def comparable(data: bytes) -> str:
    """A file's bytes as copydetect compares them: what the compiler reads as code, the lexer reads as
    code. Bytes that are not UTF-8 are replaced (U+FFFD; nvcc compiles such a file, so it is no reason
    to leave one out); line splices are joined; a #define's body goes on a line of its own, so that a
    macro is lexed as the code it expands to (on one line with its #define it is one preprocessor token)."""
    text = SPLICE_RE.sub("\n", data.decode("utf-8", errors="replace"))
    return DEFINE_RE.sub(lambda m: m.group(1) + "\n", text)


def seam(name: str, run: int) -> str:
    """The lines set before a file appended to a stage's (common_files), and around each stub compared
    as boilerplate. A fingerprint is a run of `run` (noise_threshold) characters of the tokenized text:
    the line of semicolons (kept as written by the tokenizer) is longer than a run, so no fingerprint
    spans two files, and those that touch it beside a stub are the boilerplate's."""
    return f"\n// ---- {name}: a file of this hand-in that every stage can call into ----\n{';' * run}\n"


def common_files(files: dict[str, bytes], handout: dict[str, bytes]) -> list[str]:
    """The files of a hand-in that count toward every stage: the .cu files no stage is compared by —
    one that is no stage's, and the file of a stage the handout gives complete where it differs from
    the stub. Any stage may call into them by name (ARCHITECTURE.md: the symbol check's closure), and
    which one does needs a build: every stage is taken to."""
    return sorted(n for n, data in files.items()
                  if n not in handout or (given_complete(handout[n]) and data != handout[n]))


def staged(where: Path, label: str, files: dict[str, bytes], handout: dict[str, bytes], run: int,
           kind: str = "student", origin: Path | None = None) -> dict[str, Entry]:
    """One hand-in's code of each stage compared, written into where/<label>/ for copydetect (which
    reads paths; nothing is compared from a path in the drop box): stage file -> its Entry. files: the
    hand-in's .cu files (name -> bytes); handout: stage file -> its stub; run: noise_threshold;
    origin: the hand-in's files/."""
    d = where / label
    d.mkdir(parents=True, exist_ok=True)
    common = common_files(files, handout)
    out = {}
    for stage_file, stub in handout.items():
        if stage_file in files and not given_complete(stub):
            (d / stage_file).write_text(comparable(files[stage_file]) + "".join(
                seam(name, run) + comparable(files[name]) for name in common))
            out[stage_file] = Entry(label, kind, d / stage_file, origin / stage_file if origin else None, tuple(common),
                                    as_handed_out=files[stage_file] == stub and not common)
    return out


def hand_in_notes(label: str, files: dict[str, bytes], handout: dict[str, bytes]) -> list[str]:
    """What a person reading the report should know of a hand-in's files: those compared with every
    stage (common_files), and those that are not UTF-8 text."""
    notes, common = [], common_files(files, handout)
    extra, given = [n for n in common if n not in handout], [n for n in common if n in handout]
    if extra:
        notes.append(f"{label}: {', '.join(extra)}: .cu file(s) that are no stage's (`make submit` hands in none; "
                     "grading compiles them): compared with every stage, as code any stage can call into")
    if given:
        notes.append(f"{label}: {', '.join(given)}: changed from the handout's, which is given complete: compared "
                     "with every stage, as code any stage can call into")
    for name, data in sorted(files.items()):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            notes.append(f"{label}: {name} is not UTF-8 text: compared with those bytes replaced")
    return notes


def compare_stage(stage_file: str, boilerplate: list[Path], entries: list[Entry], settings: dict,
                  prints: dict | None = None) -> StageResult:
    """Every student's code with every other student's and with every reference and archive entry,
    the boilerplate files (the handout's stubs) left out of every score; entries as handed out are
    left out. Pairs most similar first, then grouped: connected components of the pairs at or above
    report_threshold. prints: path -> the fingerprint of an entry's code made in its hand-in's cell
    (prepared); copydetect makes the others' (the reference's) here."""
    copydetect = _copydetect()
    stage = Path(stage_file).stem
    result = StageResult(stage, [])
    kept = []
    for e in entries:
        if e.as_handed_out:
            result.as_stub += e.kind == "student"
        else:
            kept.append(e)
    students = [e for e in kept if e.kind == "student"]
    others = [e for e in kept if e.kind != "student"]
    result.students = len(students)
    if not students or len(students) + len(others) < 2:
        return result
    detector = _detector(copydetect, settings, boilerplate)
    for e in students:
        detector.add_file(str(e.path), "testref")
    for e in others:
        detector.add_file(str(e.path), "ref")
    # The detector fingerprints only the files it has no fingerprint of; one the cell found not UTF-8
    # (None) it reads, finds so at once and skips, as without the cell.
    prints = prints or {}
    detector.file_data.update({str(e.path): fingerprint_of(copydetect, prints[str(e.path)]) for e in kept
                               if prints.get(str(e.path)) is not None})
    detector.run()
    matrix, tokens = detector.similarity_matrix, detector.token_overlap_matrix
    test_index = {path: i for i, path in enumerate(detector.test_files)}
    ref_index = {path: i for i, path in enumerate(detector.ref_files)}
    for e in kept:
        if str(e.path) not in detector.file_data:
            result.notes.append(f"{stage}: {e.label}'s {stage_file} is not UTF-8 text; not compared")
    for a_pos, a in enumerate(students):
        for b in students[a_pos + 1:] + others:
            i, j = test_index[str(a.path)], ref_index[str(b.path)]
            if matrix[i, j][0] < 0:
                continue
            slices = detector.slice_matrix.get((str(a.path), str(b.path)))
            if slices is None and (str(b.path), str(a.path)) in detector.slice_matrix:
                slices = detector.slice_matrix[(str(b.path), str(a.path))][::-1]
            result.pairs.append(Pair(stage, a, b, float(matrix[i, j][0]), float(matrix[i, j][1]),
                                     int(tokens[i, j]), *(slices or (None, None))))
    result.code = {path: data.raw_code for path, data in detector.file_data.items()}
    result.pairs.sort(key=lambda p: (-p.similarity, -p.matched_tokens, p.a.label, p.b.label))
    result.groups = group(result.pairs, settings["report_threshold"])
    return result


def _detector(copydetect, settings: dict, boilerplate: list[Path]):
    """copydetect's detector with the course's [similarity] settings and the boilerplate files."""
    detector = copydetect.CopyDetector(
        noise_t=settings["noise_threshold"], guarantee_t=settings["guarantee_threshold"],
        display_t=settings["report_threshold"], autoopen=False, silent=True, out_file=os.devnull)
    for path in boilerplate:
        detector.add_file(str(path), "boilerplate")
    return detector


# ---- each hand-in's code, made ready for the comparison in a cell of its own ------------------------
# Tokenizing and fingerprinting a hand-in's files takes time and memory that the files decide: a
# student's file up to the course's max_source_kb may be made to cost more than a class's report can
# wait. So a hand-in is made ready in a cell (cell.py, with the course's [cells] limits): what its
# stages compare is written for copydetect (staged), its notes read (hand_in_notes), and each stage's
# code fingerprinted as copydetect's detector does it; the cell hands back plain values, and a hand-in
# that runs it into a limit (or anything else that stops it) is its student's case, named in the
# report, while the others are compared as they would be without it. The pairs are compared here, from
# the fingerprints (bounded by what each cell could make). A fork keeps Python's string hash, which the
# fingerprints are made of, so they are the very ones the detector would make here.
@dataclass(frozen=True)
class Preparation:
    """What making each hand-in ready needs: where its code is written, the handout's stubs (stage
    file -> bytes), the detector's settings (copydetect's config), the fingerprints of each stage's
    boilerplate (stage file -> them) and the cells' limits."""
    work: Path
    handout: dict
    conf: object
    known: dict
    limits: cell.Limits


def prepared(how: Preparation, kind: str, label: str, a) -> tuple[dict[str, Entry], list[str], dict]:
    """One hand-in (a: attempts.Attempt) made ready in its cell: stage file -> its Entry, the notes on
    its files, and path -> the fingerprint (plain, fingerprint_plain) of each entry's code."""
    answer = cell.run(_prepare, how.work / "hand-ins", label, a.stage_bytes(), how.handout, how.conf.noise_t, kind,
                      a.path / "files", how.conf, how.known, limits=how.limits, what=f"comparing {label}'s hand-in")
    entries = {name: Entry(label, kind, Path(e["path"]), Path(e["origin"]), tuple(e["common"]), e["as_handed_out"])
               for name, e in answer["entries"].items()}
    return entries, answer["notes"], answer["prints"]


def _prepare(where: Path, label: str, files: dict[str, bytes], handout: dict[str, bytes], run: int, kind: str,
             origin: Path, conf, known: dict) -> dict:
    """prepared()'s work, in the hand-in's cell."""
    entries = staged(where, label, files, handout, run, kind, origin)
    return {"entries": {name: {"path": str(e.path), "origin": str(e.origin), "common": list(e.common),
                               "as_handed_out": e.as_handed_out} for name, e in entries.items()},
            "notes": hand_in_notes(label, files, handout),
            "prints": {str(e.path): fingerprint_plain(e.path, conf, known[name])
                       for name, e in entries.items() if not e.as_handed_out}}


def fingerprint_plain(path: Path, conf, boilerplate) -> dict | None:
    """copydetect's fingerprint of a file, made as its detector makes it (CopyDetector._preprocess_code,
    with the detector's settings `conf`), as plain values; None where the file is not UTF-8 text."""
    try:
        fp = _copydetect().CodeFingerprint(str(path), conf.noise_t, conf.window_size, boilerplate,
                                           not conf.disable_filtering, conf.force_language, encoding=conf.encoding)
    except UnicodeDecodeError:
        return None
    return {"filename": fp.filename, "raw_code": fp.raw_code, "filtered_code": fp.filtered_code,
            "offsets": fp.offsets.tolist(), "hashes": [int(h) for h in fp.hashes],
            "hash_idx": [[int(h), [int(i) for i in idx]] for h, idx in fp.hash_idx.items()], "k": fp.k,
            "token_coverage": float(fp.token_coverage)}


def fingerprint_of(copydetect, plain: dict):
    """The CodeFingerprint of fingerprint_plain's values: its attributes as copydetect documents them."""
    fp = object.__new__(copydetect.CodeFingerprint)
    fp.filename, fp.raw_code, fp.filtered_code = plain["filename"], plain["raw_code"], plain["filtered_code"]
    fp.k = plain["k"]
    fp.offsets = np.array(plain["offsets"])
    fp.hashes = set(plain["hashes"])
    fp.hash_idx = {h: idx for h, idx in plain["hash_idx"]}
    fp.token_coverage = np.float64(plain["token_coverage"])
    return fp


def boilerplate_prints(copydetect, settings: dict, boilerplate: list[Path]):
    """The fingerprints of the boilerplate files, as the detector leaves them out of every file's
    (copydetect 0.5.0's own method, pinned in requirements-staff.txt)."""
    return _detector(copydetect, settings, boilerplate)._get_boilerplate_hashes()


def group(pairs: list[Pair], threshold: float) -> list[list[Entry]]:
    """The connected components of the pairs at or above the threshold, most similar group first;
    sets each such pair's group number (1, 2, ...)."""
    parent = {}

    def root(e):
        while parent.setdefault(e, e) != e:
            parent[e] = parent[parent[e]]
            e = parent[e]
        return e
    flagged = [p for p in pairs if p.similarity >= threshold and p.similarity > 0]
    for p in flagged:
        parent[root(p.a)] = root(p.b)
    members, best = {}, {}
    for p in flagged:  # most similar first: a group's first pair is its best
        r = root(p.a)
        best.setdefault(r, p)
        members.setdefault(r, set()).update((p.a, p.b))
    order = sorted(members, key=lambda r: (-best[r].similarity, best[r].a.label, best[r].b.label))
    number = {r: n for n, r in enumerate(order, 1)}
    for p in flagged:
        p.group = number[root(p.a)]
    kinds = {"student": 0, "reference": 1, "archive": 2}
    return [sorted(members[r], key=lambda e: (kinds[e.kind], e.label)) for r in order]


def run(cfg, sweep: Path, stage_files: list[str], say=print) -> Path:
    """Compare every stage of the sweep; returns the report directory."""
    copydetect = _copydetect()
    settings = {k: cfg.setting("similarity", k)
                for k in ("noise_threshold", "guarantee_threshold", "report_threshold", "top_pairs")}
    cases = []  # the hand-ins that cannot be compared: each its student's case, named first in the notes
    students, plan = hand_ins(sweep, cases)
    earlier, notes = archive_hand_ins(cfg.similarity_archive())
    if not students:
        raise SimilarityError(f"{sweep}/plan.json names no student with an attempt that counts: nothing to compare")
    tmp = sweep / f".similarity-tmp-{os.getpid()}-{secrets.token_hex(3)}"
    tmp.mkdir()
    work = sweep / f".similarity-files-{os.getpid()}-{secrets.token_hex(3)}"  # the code compared, removed after
    try:
        handout = {name: (cfg.grader_dir / "student" / name).read_bytes() for name in stage_files}
        staged_stubs = {}  # stage file -> its stub as compared: boilerplate
        for name, stub in handout.items():
            staged_stubs[name] = work / "handout" / name
            staged_stubs[name].parent.mkdir(parents=True, exist_ok=True)
            edge = seam(name, settings["noise_threshold"])
            staged_stubs[name].write_text(edge + comparable(stub) + edge)
        given = [name for name, stub in handout.items() if given_complete(stub)]
        boilerplate = {name: [staged_stubs[name], *(staged_stubs[g] for g in given)] for name in handout}
        how = Preparation(work, handout, _detector(copydetect, settings, []).conf,
                          {name: boilerplate_prints(copydetect, settings, boilerplate[name])
                           for name in handout if name not in given}, cell.limits_of(cfg))
        units, prints = {}, {}  # (kind, label) -> stage file -> Entry; a file compared -> its fingerprint
        every = [(kind, label, a) for kind, hand_in in (("student", students), ("archive", earlier))
                 for label, a in sorted(hand_in.items())]
        for (kind, label, _), ready, fault in fault_boundary.each(
                every, lambda h: prepared(how, *h), what="comparing their hand-in", student=lambda h: h[1]):
            if fault is not None:
                cases.append(f"{fault}: not compared")
                continue
            units[kind, label], found, fingerprints = ready
            notes += found
            prints.update(fingerprints)
        for case in cases:
            say(f"similarity: {escaped(case)}; a case for a person (the others are compared)")
        notes = cases + notes
        compared = {label for kind, label in units if kind == "student"}
        results, skipped = [], []
        for stage_file in stage_files:
            stage = Path(stage_file).stem
            if stage_file in given:
                skipped.append(stage)
                say(f"similarity: {stage}: given complete in the handout (no {TODO_TAG} in its stub): not a stage "
                    f"of its own; a hand-in's {stage_file} that differs from it is compared with every stage")
                continue
            entries = [u[stage_file] for (kind, _), u in units.items() if kind == "student" and stage_file in u]
            missing = sorted(compared - {e.label for e in entries})
            if missing:
                notes.append(f"{stage}: no {stage_file} in the attempt of {', '.join(missing)}")
            reference = cfg.grader_dir / "reference" / stage_file
            if reference.is_file():
                staged_reference = work / "reference" / stage_file
                staged_reference.parent.mkdir(parents=True, exist_ok=True)
                staged_reference.write_text(comparable(reference.read_bytes()))
                entries.append(Entry(REFERENCE, "reference", staged_reference, reference))
            entries += [u[stage_file] for (kind, _), u in units.items() if kind == "archive" and stage_file in u]
            result = compare_stage(stage_file, boilerplate[stage_file], entries, settings, prints)
            _write_pair_pages(tmp, result, settings["top_pairs"])
            results.append(result)
            notes += result.notes
            best = {p.group: p.similarity for p in reversed(result.pairs) if p.group}
            say(f"similarity: {stage}: {result.students} hand-in(s) compared ({result.as_stub} as handed out), "
                f"{len(result.pairs)} pair(s), {len(result.groups)} group(s) at or above "
                f"{_pct(settings['report_threshold'])}" + "".join(
                    f"\n  group {n}: {', '.join(e.label for e in members)} (up to {_pct(best[n])})"
                    for n, members in enumerate(result.groups, 1)))
        _write_csvs(tmp, results)
        png = _plot(results, settings["report_threshold"])
        write_atomic(tmp / "similarity.png", png)
        title = f"Similarity report: {cfg.course} / {sweep.name}"
        write_atomic(tmp / "index.html", staff_pages.page(title, _index_body(
            results, skipped, settings, len(students), len(earlier), notes, png, copydetect.__version__, plan)))
        staff_pages.replace_dir(tmp, sweep / "similarity")
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return sweep / "similarity"


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", label)


def shown(result: StageResult, top_pairs: int) -> dict[int, list[Pair]]:
    """group number -> the pairs shown in it: its most similar pairs at or above the threshold, top_pairs at most."""
    out = {n: [] for n in range(1, len(result.groups) + 1)}
    for p in result.pairs:
        if p.group and len(out[p.group]) < top_pairs:
            out[p.group].append(p)
    return out


def _write_pair_pages(out: Path, result: StageResult, top_pairs: int):
    """<stage>/<a>--<b>.html for every pair shown in a group: the two files side by side."""
    for pairs in shown(result, top_pairs).values():
        for p in pairs:
            p.page = f"{result.stage}/{_file_name(p.a.label)}--{_file_name(p.b.label)}.html"
            (out / result.stage).mkdir(exist_ok=True)
            write_atomic(out / p.page, staff_pages.page(
                f"{result.stage}: {p.a.label} and {p.b.label}, {_pct(p.similarity)} similar", _pair_body(result, p)))


def _highlighted(code: str, slices, css: str) -> str:
    if slices is None or getattr(slices, "shape", (0, 0))[-1] == 0:
        return esc(code)
    from copydetect.utils import highlight_overlap
    marked, _ = highlight_overlap(code, slices, f"<span class='{css}'>", "</span>", escape_html=True)
    return marked


def _pair_body(result: StageResult, p: Pair) -> str:
    def side(e: Entry, share: float, slices, css: str) -> str:
        what = {"student": "student", "reference": "the instructor's solution",
                "archive": "an earlier term's hand-in"}[e.kind]
        code = result.code.get(str(e.path), "")
        common = (f" With {esc(', '.join(e.common))} of the same hand-in appended: code every stage can call into."
                  if e.common else "")
        return (f'<div class="side"><h2>{esc(e.label)} <small>({esc(what)})</small></h2>'
                f"<p>{_pct(share)} of this code's own is found in the other. <code>{esc(e.origin or e.path)}</code>"
                f"{common}</p><pre>{_highlighted(code, slices, css)}</pre></div>")
    return (
        "<style>.pair { display: flex; gap: 1em; } .side { flex: 1; min-width: 0; } "
        "pre { font-size: 0.8em; overflow-x: auto; border: 1px solid #ddd; padding: 0.5em; } "
        ".highlight-red { background: #fbb; } .highlight-green { background: #bfb; }</style>"
        f"<p>Stage {esc(result.stage)}, group {p.group}: similarity {_pct(p.similarity)}, "
        f"{p.matched_tokens} matched tokens. The code the two share is highlighted; the score leaves out what the "
        "handout's stubs give. "
        '<a href="../index.html">Back to the report</a>.</p>'
        f'<div class="pair">{side(p.a, p.similarity_a, p.slices_a, "highlight-red")}'
        f'{side(p.b, p.similarity_b, p.slices_b, "highlight-green")}</div>')


def _write_csvs(out: Path, results: list[StageResult]):
    import csv
    import io
    pairs, groups = io.StringIO(), io.StringIO()
    wp, wg = csv.writer(pairs, lineterminator="\n"), csv.writer(groups, lineterminator="\n")
    wp.writerow(PAIR_COLUMNS)
    wg.writerow(GROUP_COLUMNS)
    for r in results:
        for p in r.pairs:
            if p.similarity > 0:
                wp.writerow([r.stage, p.group or "", p.a.label, p.a.kind, p.b.label, p.b.kind, f"{p.similarity:.3f}",
                             f"{p.similarity_a:.3f}", f"{p.similarity_b:.3f}", p.matched_tokens, p.page])
        for n, members in enumerate(r.groups, 1):
            best = next(p for p in r.pairs if p.group == n)
            wg.writerow([r.stage, n, len(members), sum(e.kind == "student" for e in members),
                         " ".join(e.label for e in members), f"{best.similarity:.3f}"])
    write_atomic(out / "pairs.csv", pairs.getvalue())
    write_atomic(out / "groups.csv", groups.getvalue())


def _plot(results: list[StageResult], threshold: float) -> bytes:
    """One row per stage: every pair's similarity as a dot; pairs at or above the threshold in red."""
    stages = [r.stage for r in results]
    fig, ax = plt.subplots(figsize=(9, 0.7 * len(stages) + 1.6))
    for row, r in enumerate(results):
        for k, p in enumerate(r.pairs):
            jitter = ((k * 7919) % 11 - 5) / 40  # deterministic spread so equal scores stay visible
            flagged = p.similarity >= threshold
            ax.scatter([p.similarity], [row + jitter], s=60 if flagged else 18, zorder=3 if flagged else 2,
                       color=FLAG_COLOR if flagged else PAIR_COLOR, alpha=0.9 if flagged else 0.5)
    ax.axvline(threshold, color=FLAG_COLOR, linestyle="--", linewidth=1)
    ax.set_yticks(range(len(stages)), stages)
    ax.set_ylim(-0.7, len(stages) - 0.3)
    ax.invert_yaxis()  # the first stage on top, as on the page
    ax.set_xlim(-0.02, 1.02)
    ax.set_xlabel("similarity of a pair (share of one file's own code found in the other)")
    ax.set_title(f"Every pair compared, per stage (dashed: report threshold {threshold:.0%})")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    png = staff_pages.png_bytes(fig)
    plt.close(fig)
    return png


def _index_body(results, skipped, settings, n_students, n_archive, notes, png, version, plan) -> str:
    threshold, top_pairs = settings["report_threshold"], settings["top_pairs"]
    parts = [
        f'<p>{n_students} students with an attempt that counts (sweep plan of {esc(plan.get("created", ""))}), '
        f"each also compared with the instructor's solution (<code>reference/</code>)"
        + (f" and {n_archive} hand-in(s) of earlier terms" if n_archive else "") + ". "
        f"Files compared by copydetect {esc(version)} (winnowing; noise threshold "
        f"{settings['noise_threshold']}, guarantee threshold {settings['guarantee_threshold']}). A hand-in's code of "
        "a stage is its stage file and every file of the hand-in that no stage is compared by (a .cu file that is "
        "no stage's; a file the handout gives complete, where changed): any stage can call into those. The "
        "handout's stubs are left out as boilerplate, and a hand-in whose code of a stage is the stub alone is "
        "not compared in it. A pair's similarity is the larger share of one's own code that also appears in the "
        "other's. Hand-ins "
        f"connected by pairs at or above {_pct(threshold)} form one group; each group lists its most similar "
        f"pairs ({top_pairs} at most), each with its own side-by-side page. A high score tells where to look, "
        "not that anyone copied: read the pair side by side.</p>",
        staff_pages.img(png, "similarity of every pair, per stage", "similarity-plot"),
    ]
    if skipped:
        parts.append(f"<p>Not compared as stages of their own: {esc(', '.join(skipped))} — given complete in the "
                     f"handout (no <code>{esc(TODO_TAG)}</code> in the stub); a hand-in's file that differs from "
                     "the stub is compared with every stage.</p>")
    for r in results:
        parts.append(f'<h2 id="stage-{esc(r.stage)}">{esc(r.stage)}</h2>')
        parts.append(f"<p>{r.students} student hand-in(s) compared"
                     + (f"; {r.as_stub} handed in the stub unchanged (not compared)" if r.as_stub else "")
                     + f"; {len(r.pairs)} pair(s); "
                     + (f"{len(r.groups)} group(s) at or above {_pct(threshold)}.</p>" if r.groups else
                        f"none at or above {_pct(threshold)}.</p>"))
        for n, (members, pairs) in enumerate(zip(r.groups, shown(r, top_pairs).values()), 1):
            students = [e.label for e in members if e.kind == "student"]
            others = [e.label for e in members if e.kind != "student"]
            total = sum(p.group == n for p in r.pairs)
            parts.append(f'<h3 id="group-{esc(r.stage)}-{n}">Group {n}: {len(students)} student(s): '
                         f"{esc(', '.join(students))}" + (f" — with {esc(', '.join(others))}" if others else "")
                         + "</h3>")
            if total > len(pairs):
                parts.append(f'<p class="note">the {len(pairs)} most similar of its {total} pairs at or above '
                             f"{_pct(threshold)}</p>")
            rows = [[rank, p.a.label, p.b.label, _pct(p.similarity), _pct(p.similarity_a), _pct(p.similarity_b),
                     p.matched_tokens, staff_pages.link(p.page, "side by side")]
                    for rank, p in enumerate(pairs, 1)]
            parts.append(staff_pages.table(
                ["#", "A", "B", "similarity", "of A's code", "of B's code", "matched tokens", "page"],
                rows, numeric=(0, 3, 4, 5, 6), row_class=lambda i: "flag", table_id=f"pairs-{r.stage}-{n}"))
    if notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f'<p class="note">Written {stamp}. Staff only: this page names students.</p>')
    return "\n".join(parts)
