// bench_rows.cpp — the rows of a plan's outcome (bench_rows.h).
#include "judge/bench_rows.h"

#include "common/bound.h"
#include "common/sides.h"

namespace gemmlab {

ItemRun ItemRows::set_up(const BenchItem& item, size_t index, size_t si) const {
    ItemRun r;
    r.item = &item;
    r.index = index;
    r.result.shape = plan_.shapes[si];
    r.result.peak_gflops = peak_;
    r.result.timed_by = "judge";
    r.warmups_left = plan_.warmup;
    if (const auto skipped = skipped_.find(index); skipped != skipped_.end()) {
        r.done = true;
        r.result = lost_timing(plan_.shapes[si], Disposition::skipped, skipped->second);
        return r;
    }
    if (item.kind != BenchItem::Kind::stage) return r;
    const StageInfo* st = find_stage(item.side, item.stage);
    const StageVariant* v = st ? find_variant(*st, item.variant) : nullptr;
    if (!v) {
        r.done = true;
        r.result = lost_timing(plan_.shapes[si], Disposition::crashed, "no stage " + item.label() + " in this grader");
        return r;
    }
    // A tensor-core stage may go past the FP32 pipe's peak; it is held to the tensor cores' instead.
    r.tensor_cores = st->tensor_cores;
    if (st->tensor_cores) r.result.peak_gflops = tensor_peak_;
    r.bound = error_bound(plan_.precision, *v);
    r.result.error_bound = r.bound.threshold;
    r.pitched = st->operands == Operands::pitched;
    return r;
}

}  // namespace gemmlab
