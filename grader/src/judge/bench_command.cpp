// bench_command.cpp — `gemmlab bench` (bench_command.h): the check and bench steps, their tables, and
// the results file.
#include "judge/bench_command.h"

#include <iostream>

#include "common/check_result.h"
#include "judge/environment.h"
#include "judge/format.h"
#include "judge/pipeline.h"
#include "judge/results_io.h"

namespace gemmlab {

using nlohmann::json;

int run_bench_command(GpuContext& ctx, const BenchCommandOptions& opt) {
    const MessageStyle style{opt.color};
    CheckStepInput check;
    check.selection = opt.selection;
    check.quick = true;
    check.seed = opt.seed;
    check.color = opt.color;
    check.progress = opt.progress;
    std::cout << "Before timing, every stage is checked (never time a wrong kernel).\n";
    const CheckStepResult checked = check_step(ctx, check);

    BenchStepInput req;
    req.precisions = opt.selection.precisions;
    req.shapes = opt.shapes;
    req.config = opt.config;
    req.seed = opt.seed;
    req.progress = opt.progress;
    req.checked = checked.results;
    if (opt.with_reference) req.reference_runs = expand(Side::reference, opt.selection);
    const BenchStepResult timed = bench_step(ctx, req);
    for (const auto& [p, out] : timed.outcomes) print_bench_table(out, style);
    print_notes(timed.notes, "  ");
    const int status = exit_status(timed.results);
    if (!opt.json_out.empty()) {
        json doc{{"schema", kResultsSchema},
                 {"kind", "bench"},
                 {"created", utc_now()},
                 {"submission", opt.submission},
                 {"seed", opt.seed},
                 {"environment", describe_environment()},
                 {"settings", settings_json(opt.config, opt.shapes, opt.seed)},
                 {"device", timed.devices},
                 {"results", timed.results},
                 {"baselines", timed.baselines},
                 {"reference", timed.reference},
                 {"notes", opt.config_notes}};
        doc["environment"]["clocks"] = clocks_from_devices(timed.devices);
        write_json_atomically(opt.json_out, doc);
        std::cout << "\nwrote " << opt.json_out << "\n";
    }
    return status;
}

}  // namespace gemmlab
