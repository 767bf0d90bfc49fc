"""report_profile.py — the "profiles" block of the lab report: the summaries `make profile` wrote
(results/<submission>/profile/<stage>-<prec>.json, schema gemmlab.profile/1; grader/scripts/ncu_profile.py),
one table per profiled stage and precision, in the registry's order.

The table is the one `make profile` prints and writes beside the JSON (ncu_profile.markdown: one
definition). A profile whose stage file changed since it was taken is marked, so the numbers a
student discusses are those of the code handed in.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from report_data import ReportError
from report_tables import md_escape, notice

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "grader" / "scripts"))
import ncu_profile  # noqa: E402  (the profile's schema and its table)

PRECISION_ORDER = {"float": 0, "double": 1}


def load_profiles(folder):
    """The profile documents of a folder (none when it does not exist), each with its "path"."""
    folder = Path(folder) if folder else None
    if not folder or not folder.is_dir():
        return []
    docs = []
    for path in sorted(folder.glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ReportError(f"{path}: not a profile ({e}); run make profile again or delete it") from None
        if not isinstance(doc, dict) or doc.get("schema") != ncu_profile.SCHEMA:
            continue  # not make profile's: leave it alone
        if not isinstance(doc.get("kernels"), list):
            raise ReportError(f"{path}: a profile without its kernels; run make profile again")
        doc["path"] = str(path)
        docs.append(doc)
    return docs


def stale(doc, root=ROOT):
    """The stage file a profile was taken of, when it has changed since; else None."""
    record = doc.get("stage_file") or {}
    path = Path(root) / record.get("path", "")
    if not record.get("sha256") or not path.is_file():
        return None
    digest = "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    return record["path"] if digest != record["sha256"] else None


def order(docs, stage_names):
    rank = {name: i for i, name in enumerate(stage_names)}
    return sorted(docs, key=lambda d: (rank.get(d.get("stage"), len(rank)), d.get("label", ""),
                                       PRECISION_ORDER.get(d.get("precision"), 2)))


def profiles_block(docs, stage_names, source):
    """The Markdown of the report's "profiles" include."""
    if not docs:
        return notice("No profiles yet: `make profile STAGE=tiled/16 PREC=float` on a GPU node writes one "
                      f"({md_escape(source)}), and `make report` shows it here.")
    out = ["Nsight Compute on one call of each stage below (`make profile`), kernel by kernel. Memory "
           "throughput is the busiest of the memory units (shared memory and L1 included), so compare it with "
           "DRAM bandwidth to see which level is busy; stall reasons count the cycles warps waited, per "
           "instruction issued, for each reason (the largest three, as a share of all stalls). Shared-memory "
           "accesses take one wavefront per instruction for 4-byte words (two for 8, four for 16 bytes): more "
           "are bank conflicts; a warp's coalesced global access takes 4 sectors per request for 4-byte words. "
           "The roofline row places the kernel at its measured arithmetic intensity (FLOPs on the CUDA cores "
           "per DRAM byte).\n"]
    for doc in order(docs, stage_names):
        if doc.get("placeholder"):
            out.append(notice("Placeholder profile (written by hand in ncu's format, not measured): "
                              "make profile replaces it."))
        out.append(ncu_profile.markdown(doc, heading=None))
        changed = stale(doc)
        if changed:
            out.append(f"*{md_escape(changed)} changed since this profile was taken: run `make profile "
                       f"STAGE={doc.get('label')} PREC={doc.get('precision')}` again.*\n")
    return "\n".join(out)


def add_profiles(blocks, generated_dir, folder, stage_names):
    """Writes the "profiles" block (generated_dir/profiles.md); returns how many profiles it holds."""
    docs = load_profiles(folder)
    blocks["profiles"] = profiles_block(docs, stage_names, str(folder) if folder else "no results folder")
    (Path(generated_dir) / "profiles.md").write_text(blocks["profiles"], encoding="utf-8")
    return len(docs)
