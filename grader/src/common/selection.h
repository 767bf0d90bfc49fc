// selection.h — which stages a command works on, from "tiled", "tiled/16" or "" and a precision.
#pragma once

#include <string>
#include <vector>

#include "common/vocabulary.h"
#include "common/sides.h"

namespace gemmlab {

// Which stages a command works on: "tiled" (all its variants), "tiled/16", or "" for all.
struct Selection {
    std::string stage;                       // "" = all
    std::string variant;                     // "" = all (when the stage has several)
    std::vector<Precision> precisions{Precision::f32, Precision::f64};
};

// Parses "tiled", "tiled/16" or "" against the registry; throws std::invalid_argument with a
// message that lists the stages and variants that exist.
Selection parse_selection(Side side, const std::string& stage_arg, const std::string& prec_arg);

struct StageRun {
    const StageInfo* stage;
    const StageVariant* variant;
    Precision precision;
    std::string label() const;  // "tiled/16" or "naive"
    int min_arch() const { return precision == Precision::f32 ? variant->min_arch_f32 : variant->min_arch_f64; }
};

// Why a run cannot run where the usable architecture is `usable_arch` (the lower of the GPU's and
// the build's; gemmlab/stages.h min_arch), or "" when it can. `device_arch`, `code_arch` name which.
std::string unsupported_reason(const StageRun& run, int device_arch, int code_arch);
std::vector<StageRun> expand(Side side, const Selection& sel);

}  // namespace gemmlab
