"""report_data.py — what the lab report is made from: the report benchmark set (course.toml [report]),
the stage registry (`gemmlab list --json`) and the results files (docs/results-schema.md), read into
one `Dataset` that the figures and tables query.

Nothing here names a stage: stages, their order, titles and variants come from the registry; which
stage is the baseline, which ones build pitched operands and which ones may use the tensor cores
come from its `baseline`, `operands` and `tensor_cores` fields (and a variant's declared input
precision and error bound from `variant_info`).
"""
from __future__ import annotations

import difflib
import json
import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

RESULTS_SCHEMA = "gemmlab.results/1"
REGISTRY_FILE = "registry.json"  # `gemmlab list --json`, saved beside the results
RUN_FILE = "report-run.json"     # how and where the report set was measured (make_report.py)
GRADE_FILE = "grade.json"        # a copy of the latest `make grade` result, for the score column
PRECISIONS = ("float", "double")


class ReportError(Exception):
    """A problem the user can fix; printed as one message, without a stack trace."""


# ---- the report benchmark set ----------------------------------------------------------------

@dataclass(frozen=True)
class ReportSet:
    """The shapes `make report` measures. Defaults here; course.toml [report] overrides them."""
    square_sizes: tuple = (256, 384, 512, 768, 1000, 1024, 1536, 2000, 2048, 3000, 4096, 6144, 8192)
    odd_sizes: tuple = (1001, 1023, 2047, 2049, 4095)
    rect_shapes: tuple = ("8192x8192x256", "256x256x16384", "16384x64x4096", "64x16384x4096",
                          "8192x128x8192")
    precisions: tuple = PRECISIONS
    headline_size: int = 4096
    max_seconds_per_shape: float = 0.5
    gpu_peaks: dict = field(default_factory=dict, hash=False, compare=False)
    history: tuple = ()  # stages whose tuning history (make bench TAG=...) the report shows

    def groups(self):
        """(name, what it is for, shapes) of each group of shapes, in the order they are measured."""
        return [
            ("square", f"square sizes {self.square_sizes[0]}..{self.square_sizes[-1]}",
             [(n, n, n) for n in self.square_sizes]),
            ("odd", "sizes that are not multiples of the tile or vector width",
             [(n, n, n) for n in self.odd_sizes]),
            ("rect", "tall-skinny and wide shapes", [parse_shape(s) for s in self.rect_shapes]),
        ]

    def fingerprint(self):
        """What decides whether earlier measurements are still the report set."""
        return {"groups": [[g, [list(s) for s in shapes]] for g, _, shapes in self.groups()],
                "precisions": list(self.precisions), "max_seconds_per_shape": self.max_seconds_per_shape}


SHAPE_RE = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*[xX×]\s*(\d+)\s*$")


def parse_shape(text):
    m = SHAPE_RE.match(str(text))
    if not m:
        raise ReportError(f"'{text}' is not a shape: write MxNxK, e.g. 4096x4096x256")
    return tuple(int(v) for v in m.groups())


def shape_str(shape):
    return "x".join(str(v) for v in shape)


def load_report_set(config_path):
    """Reads course.toml [report]; every key is optional. Wrong keys and values are named."""
    defaults = ReportSet()
    if config_path is None or not Path(config_path).exists():
        return defaults
    try:
        with open(config_path, "rb") as f:
            section = tomllib.load(f).get("report", {})
    except tomllib.TOMLDecodeError as e:
        raise ReportError(f"{config_path}: {e}") from None
    where = f"{config_path} [report]"
    known = {f for f in ReportSet.__dataclass_fields__}
    for key in section:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise ReportError(f"{where}: unknown key '{key}' ({hint}known: {', '.join(sorted(known))})")
    values = {}

    def sizes(key):
        v = section[key]
        if not (isinstance(v, list) and v and all(isinstance(n, int) and n > 0 for n in v)):
            raise ReportError(f"{where}: {key} must be a list of positive integers, got {v!r}")
        return tuple(sorted(set(v)))

    for key in ("square_sizes", "odd_sizes"):
        if key in section:
            values[key] = sizes(key)
    if "rect_shapes" in section:
        v = section["rect_shapes"]
        if not isinstance(v, list):
            raise ReportError(f"{where}: rect_shapes must be a list of \"MxNxK\" strings")
        for s in v:
            parse_shape(s)
        values["rect_shapes"] = tuple(v)
    if "precisions" in section:
        v = section["precisions"]
        if not (isinstance(v, list) and v and all(p in PRECISIONS for p in v)):
            raise ReportError(f"{where}: precisions must be a list of \"float\"/\"double\", got {v!r}")
        values["precisions"] = tuple(v)
    if "headline_size" in section:
        v = section["headline_size"]
        if not (isinstance(v, int) and v > 0):
            raise ReportError(f"{where}: headline_size must be a positive integer, got {v!r}")
        values["headline_size"] = v
    if "max_seconds_per_shape" in section:
        v = section["max_seconds_per_shape"]
        if not (isinstance(v, (int, float)) and v > 0):
            raise ReportError(f"{where}: max_seconds_per_shape must be a positive number, got {v!r}")
        values["max_seconds_per_shape"] = float(v)
    if "gpu_peaks" in section:
        v = section["gpu_peaks"]
        if not isinstance(v, dict) or not all(isinstance(x, dict) for x in v.values()):
            raise ReportError(f"{where}: gpu_peaks must be tables, e.g. [report.gpu_peaks.\"NVIDIA H100 PCIe\"]")
        values["gpu_peaks"] = v
    if "history" in section:
        v = section["history"]
        if not (isinstance(v, list) and all(isinstance(n, str) and n for n in v)):
            raise ReportError(f"{where}: history must be a list of stage names, e.g. [\"reuse\"], got {v!r}")
        values["history"] = tuple(v)
    return ReportSet(**{**defaults.__dict__, **values})


# ---- results ---------------------------------------------------------------------------------

@dataclass
class Point:
    """One timed shape of one stage × variant × precision."""
    shape: tuple
    disposition: str
    gflops: float | None
    time_ms: float | None
    spread_pct: float | None
    x_naive: float | None
    pct_cublas: float | None
    sm_clock_mhz: float | None
    throttled: bool = False  # NVML saw a power, thermal or hardware slowdown while timing it
    # The tensor stage's additions (docs/results-schema.md): the ratio to true-FP32/FP64 cuBLAS, which
    # cuBLAS pct_cublas is to, the worst verified error and the bound it was held to (u·G).
    pct_cublas_fp32: float | None = None
    cublas_item: str = ""
    max_error_ratio: float | None = None
    error_bound: float | None = None


@dataclass
class StageResult:
    stage: str
    variant: str
    precision: str
    disposition: str
    problem: str
    points: dict = field(default_factory=dict)  # shape -> Point
    placeholder: bool = False  # synthesized fixture numbers, not a measurement (tests/fixtures/report)

    def gflops(self, shape):
        p = self.points.get(shape)
        return p.gflops if p and p.disposition == "passed" and p.gflops else None


@dataclass
class Dataset:
    registry: list            # stages as `gemmlab list --json` prints them
    results: dict             # (stage, variant, precision) -> StageResult
    baselines: dict           # (precision, shape) -> {"naive_gflops": .., "cublas_gflops": ..}
    environment: dict
    created: str
    run: dict                 # report-run.json: commit, when, commands
    grade: dict | None        # the score object of a grade result
    sources: list             # the files read

    # -- the registry --
    def stage(self, name):
        return next((s for s in self.registry if s["name"] == name), None)

    def stage_names(self):
        names = [s["name"] for s in self.registry]
        extra = sorted({k[0] for k in self.results} - set(names))  # results of stages no longer listed
        return names + extra

    def title(self, name):
        s = self.stage(name)
        return s["title"] if s else name

    def variants(self, name):
        s = self.stage(name)
        if s:
            return list(s["variants"]) or [""]
        return sorted({k[1] for k in self.results if k[0] == name})

    def baseline_stage(self):
        return next((s["name"] for s in self.registry if s.get("baseline")), None)

    def tensor_stages(self):
        """The stages that may use the tensor cores (registry `tensor_cores`): the report shows them in
        a section of their own, beside cuBLAS in their variants' precisions."""
        return [s["name"] for s in self.registry if s.get("tensor_cores")]

    def cuda_core_stages(self):
        """The other stages, in registry order: the FP32/FP64 ladder the figures compare."""
        tensor = set(self.tensor_stages())
        return [n for n in self.stage_names() if n not in tensor]

    def variant_info(self, name, variant):
        """{"label", "inputs": {"float", "double"}, "error_bound": {"float", "double"}} from the registry,
        or {} for a registry that does not list it."""
        s = self.stage(name) or {}
        return next((v for v in s.get("variant_info", []) if v.get("label") == variant), {})

    # -- results --
    def result(self, stage, variant, precision):
        return self.results.get((stage, variant, precision))

    def implemented(self, stage, precision):
        """True when some variant of the stage passed and was timed in this precision."""
        return any(self.best_gflops(stage, v, precision) for v in self.variants(stage))

    def best_gflops(self, stage, variant, precision):
        r = self.result(stage, variant, precision)
        vals = [p.gflops for p in r.points.values() if p.disposition == "passed" and p.gflops] if r else []
        return max(vals) if vals else None

    def status(self, stage, precision):
        """('ok', '') or (disposition, one sentence) for a stage that has no timed data."""
        if self.implemented(stage, precision):
            return "ok", ""
        rs = [self.result(stage, v, precision) for v in self.variants(stage)]
        rs = [r for r in rs if r]
        if not rs:
            draft = isinstance(self.run, dict) and self.run.get("draft")  # it names the command once, on top
            return "not_measured", "not measured yet" if draft else "not measured yet (run `make report` on a GPU)"
        for r in rs:
            if r.disposition not in ("not_implemented", "passed"):
                return r.disposition, f"{r.disposition.replace('_', ' ')}: {r.problem}".rstrip(": ")
        if all(r.disposition == "not_implemented" for r in rs):
            return "not_implemented", "not implemented yet"
        return "no_data", "no timed shapes"

    def chosen_variant(self, stage, precision):
        """The variant that stands for a stage in figures and tables: the one the grade used, else the
        fastest at the largest size that every timed variant has."""
        variants = self.variants(stage)
        if len(variants) == 1:
            return variants[0]
        if self.grade:
            for row in self.grade.get("stages", []):
                if row.get("stage") == stage and row.get("precision") == precision and \
                        row.get("variant_used") in variants:
                    return row["variant_used"]
        timed = [v for v in variants if self.best_gflops(stage, v, precision)]
        if not timed:
            return variants[0]
        common = set.intersection(*(set(s for s, p in self.result(stage, v, precision).points.items()
                                        if p.disposition == "passed" and p.gflops) for v in timed))
        if common:
            shape = max(common, key=lambda s: s[0] * s[1] * s[2])
            return max(timed, key=lambda v: self.result(stage, v, precision).gflops(shape))
        return max(timed, key=lambda v: self.best_gflops(stage, v, precision))

    def label(self, stage, variant):
        return f"{stage} ({variant})" if variant else stage

    def baseline(self, precision, shape):
        """(naive GFLOPS, cuBLAS GFLOPS) for one shape; None where unknown."""
        b = self.baselines.get((precision, shape), {})
        return b.get("naive_gflops"), b.get("cublas_gflops")

    def cublas_gflops(self, precision, shape, item="cublas"):
        """GFLOPS of one cuBLAS item of the bench ("cublas", "cublas/tf32", "cublas/fp16") at a shape."""
        return self.baselines.get((precision, shape), {}).get(item.replace("/", "_") + "_gflops")

    def score_row(self, stage, precision):
        if not self.grade:
            return None
        return next((r for r in self.grade.get("stages", [])
                     if r.get("stage") == stage and r.get("precision") == precision), None)


# Which disposition a stage shows when runs of the report set disagree: a failure anywhere wins.
_SEVERITY = {"no_gpu": 0, "skipped": 1, "not_implemented": 2, "passed": 3}


def _num(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _shape_of(obj):
    """A shape from {M,N,K}, [M,N,K] or "MxNxK"."""
    if isinstance(obj, dict):
        return int(obj["M"]), int(obj["N"]), int(obj["K"])
    if isinstance(obj, (list, tuple)):
        return tuple(int(v) for v in obj[:3])
    return parse_shape(obj)


def _baseline_rows(baselines):
    """Accepts the `baselines` object in the forms the schema allows ("per precision, per shape"):
    {prec: {"MxNxK": {...}}}, {prec: [{shape, ...}]} or [{precision, shape, ...}]."""
    if isinstance(baselines, dict):
        for prec, per_shape in baselines.items():
            if isinstance(per_shape, dict):
                for shape, row in per_shape.items():
                    yield prec, _shape_of(shape), row
            elif isinstance(per_shape, list):
                for row in per_shape:
                    yield prec, _shape_of(row["shape"]), row
    elif isinstance(baselines, list):
        for row in baselines:
            yield row["precision"], _shape_of(row["shape"]), row


def load_dataset(results_dir):
    """Reads every results file of a report results directory (report/build/results or a fixture copy)."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"no results directory {results_dir}: run `make report` on a GPU first")
    registry_path = results_dir / REGISTRY_FILE
    if not registry_path.exists():
        raise ReportError(f"no measurements in {results_dir} yet ({REGISTRY_FILE} is missing): "
                          "run `make report` on a GPU node first")
    registry = _read_json(registry_path).get("stages")
    if not isinstance(registry, list):
        raise ReportError(f"{registry_path}: no 'stages' list (expected `gemmlab list --json` output)")

    files = []
    for path in sorted(results_dir.glob("*.json")):
        if path.name in (REGISTRY_FILE, RUN_FILE):
            continue
        doc = _read_json(path)
        if doc.get("schema") != RESULTS_SCHEMA:
            raise ReportError(f"{path}: schema is {doc.get('schema')!r}, expected {RESULTS_SCHEMA!r}")
        files.append((path, doc))
    files.sort(key=lambda pd: pd[1].get("created", ""))  # later measurements win

    results, baselines, environment, created, grade = {}, {}, {}, "", None
    for path, doc in files:
        if doc.get("kind") == "grade" and path.name == GRADE_FILE:
            grade = doc.get("score")
            if not environment:
                environment = doc.get("environment", {})
            continue
        if doc.get("kind") not in ("bench", "grade"):
            continue
        environment = doc.get("environment") or environment
        created = max(created, doc.get("created", ""))
        for r in doc.get("results", []):
            if r.get("side", "submission") != "submission":
                continue  # the reference's own stages, when a grade times them too
            key = (r["stage"], r.get("variant", ""), r["precision"])
            disposition, problem = r.get("disposition", "skipped"), r.get("problem", "")
            sr = results.get(key)
            if sr is None:
                sr = results[key] = StageResult(*key, disposition, problem)
            elif _SEVERITY.get(disposition, 9) > _SEVERITY.get(sr.disposition, 9):
                sr.disposition, sr.problem = disposition, problem  # a failure in any run shows
            sr.placeholder = sr.placeholder or bool(r.get("placeholder"))
            for b in r.get("bench") or []:
                shape = _shape_of(b["shape"])
                sr.points[shape] = Point(shape, b.get("disposition", "passed"), _num(b.get("gflops")),
                                         _num(b.get("time_ms")), _num(b.get("spread_pct")),
                                         _num(b.get("x_naive")), _num(b.get("pct_cublas")),
                                         _num(b.get("sm_clock_mhz")), bool(b.get("throttled")),
                                         _num(b.get("pct_cublas_fp32")), b.get("cublas_item", "") or "",
                                         _num(b.get("max_error_ratio")), _num(b.get("error_bound")))
        for prec, shape, row in _baseline_rows(doc.get("baselines") or {}):
            baselines[(prec, shape)] = {k: _num(v) for k, v in row.items() if k != "shape"}

    # Where a bench file has no `baselines`, recover them from the ratios every point carries.
    for (stage, variant, prec), sr in results.items():
        for shape, p in sr.points.items():
            if not p.gflops or p.disposition != "passed":
                continue
            b = baselines.setdefault((prec, shape), {})
            if b.get("naive_gflops") is None and p.x_naive:
                b["naive_gflops"] = p.gflops / p.x_naive
            # pct_cublas is to the variant's own cuBLAS (cublas_item); pct_cublas_fp32, when there, to
            # the true-FP32/FP64 one that "cublas_gflops" means.
            own = p.cublas_item.replace("/", "_") if p.cublas_item and p.cublas_item != "cublas" else "cublas"
            if b.get(f"{own}_gflops") is None and p.pct_cublas:
                b[f"{own}_gflops"] = p.gflops / (p.pct_cublas / 100.0)
            if b.get("cublas_gflops") is None and p.pct_cublas_fp32:
                b["cublas_gflops"] = p.gflops / (p.pct_cublas_fp32 / 100.0)

    run = _read_json(results_dir / RUN_FILE) if (results_dir / RUN_FILE).exists() else {}
    return Dataset(registry, results, baselines, environment, created, run, grade,
                   [p.name for p, _ in files])


def _read_json(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: not valid JSON ({e})") from None
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from None


# ---- the GPU's peaks, for the roofline -------------------------------------------------------
# The tables live in grader/scripts/gpu_peaks.py, which make profile reads too (one home per number).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "grader" / "scripts"))
from gpu_peaks import FMA_LANES_PER_SM, FP64_TENSOR_FACTOR, bandwidth_gbs, fma_peak_gflops  # noqa: E402


def gpu_peaks(environment, report_set):
    """{'name', 'fp32_gflops', 'fp64_gflops', 'fp64_tensor_gflops', 'bandwidth_gbs', 'source'} with
    None where unknown. course.toml [report.gpu_peaks."<GPU name>"] keys fp32_tflops, fp64_tflops,
    fp64_tensor_tflops, bandwidth_gbs override what is computed here."""
    gpu = environment.get("gpu") or {}
    name = gpu.get("name", "")
    cc = str(gpu.get("compute_capability", ""))
    sms, clock = gpu.get("sms"), gpu.get("max_sm_clock_mhz")
    peaks = {"name": name, "fp32_gflops": None, "fp64_gflops": None, "fp64_tensor_gflops": None,
             "bandwidth_gbs": None, "source": []}
    if cc in FMA_LANES_PER_SM and sms and clock:
        peaks["fp32_gflops"] = fma_peak_gflops(cc, sms, clock, "float")
        peaks["fp64_gflops"] = fma_peak_gflops(cc, sms, clock, "double")
        if cc in FP64_TENSOR_FACTOR and FP64_TENSOR_FACTOR[cc] > 1:
            peaks["fp64_tensor_gflops"] = peaks["fp64_gflops"] * FP64_TENSOR_FACTOR[cc]
        peaks["source"].append(f"FMA peaks: {sms} SMs × FMA lanes of sm_{cc.replace('.', '')} × "
                               f"2 × {clock:g} MHz")
    bandwidth, key = bandwidth_gbs(name)
    if bandwidth:
        peaks["bandwidth_gbs"] = bandwidth
        peaks["source"].append(f"bandwidth: datasheet of the {key}")
    override = next((v for k, v in report_set.gpu_peaks.items() if k and k in name), None)
    if override:
        for key, scale in (("fp32_tflops", 1000.0), ("fp64_tflops", 1000.0),
                           ("fp64_tensor_tflops", 1000.0), ("bandwidth_gbs", 1.0)):
            if key in override:
                peaks[key.replace("_tflops", "_gflops")] = float(override[key]) * scale
        peaks["source"].append("course.toml [report.gpu_peaks]")
    return peaks
