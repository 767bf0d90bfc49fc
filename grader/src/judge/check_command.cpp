// check_command.cpp — `gemmlab check` (check_command.h): the check step, and its results file.
#include "judge/check_command.h"

#include <nlohmann/json.hpp>

#include "judge/environment.h"
#include "judge/results_io.h"

namespace gemmlab {

int run_check_command(GpuContext& ctx, const CheckCommandOptions& opt) {
    nlohmann::json out = check_step(ctx, opt.check).to_json();
    out["schema"] = kResultsSchema;
    out["kind"] = "check";
    out["environment"] = describe_environment();
    if (!opt.json_out.empty()) write_json_atomically(opt.json_out, out);
    return exit_status(out["results"]);
}

}  // namespace gemmlab
