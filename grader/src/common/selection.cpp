// selection.cpp — parse_selection and expand (selection.h).
#include "common/selection.h"

#include <stdexcept>

namespace gemmlab {

std::string StageRun::label() const {
    return variant->label[0] ? std::string(stage->name) + "/" + variant->label : std::string(stage->name);
}

Selection parse_selection(Side side, const std::string& stage_arg, const std::string& prec_arg) {
    Selection sel;
    if (!prec_arg.empty() && prec_arg != "all" && prec_arg != "both") {
        auto p = parse_precision(prec_arg);
        if (!p) throw std::invalid_argument("unknown precision '" + prec_arg + "': use float, double or all");
        sel.precisions = {*p};
    }
    if (stage_arg.empty() || stage_arg == "all") return sel;
    const auto slash = stage_arg.find('/');
    sel.stage = stage_arg.substr(0, slash);
    if (slash != std::string::npos) sel.variant = stage_arg.substr(slash + 1);
    const StageInfo* st = find_stage(side, sel.stage);
    auto known = [&] {
        std::string list;
        for (const StageInfo& s : stages(side)) {
            list += list.empty() ? "" : ", ";
            list += s.name;
            if (s.variants.size() > 1) {
                list += " (";
                for (size_t i = 0; i < s.variants.size(); ++i)
                    list += (i ? "/" : "") + std::string(s.variants[i].label);
                list += ")";
            }
        }
        return list;
    };
    if (!st) throw std::invalid_argument("unknown stage '" + sel.stage + "'; the stages are: " + known());
    if (!sel.variant.empty() && !find_variant(*st, sel.variant))
        throw std::invalid_argument("stage '" + sel.stage + "' has no variant '" + sel.variant +
                                    "'; the stages are: " + known());
    return sel;
}

std::vector<StageRun> expand(Side side, const Selection& sel) {
    std::vector<StageRun> runs;
    for (const StageInfo& s : stages(side)) {
        if (!sel.stage.empty() && sel.stage != s.name) continue;
        for (const StageVariant& v : s.variants) {
            if (!sel.variant.empty() && sel.variant != v.label) continue;
            for (Precision p : sel.precisions) runs.push_back({&s, &v, p});
        }
    }
    return runs;
}

std::string unsupported_reason(const StageRun& run, int device_arch, int code_arch) {
    const int need = run.min_arch();
    if (need <= 0 || (need <= device_arch && need <= code_arch)) return "";
    const std::string sm = "sm_" + std::to_string(need);
    if (need > device_arch)
        return "needs " + sm + " or newer; this GPU is sm_" + std::to_string(device_arch);
    return "needs " + sm + " or newer; the grader was built for sm_" + std::to_string(code_arch) +
           " (ARCH=sm_" + std::to_string(code_arch) + "), although this GPU is sm_" + std::to_string(device_arch);
}

}  // namespace gemmlab
