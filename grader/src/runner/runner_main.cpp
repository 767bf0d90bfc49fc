// runner_main.cpp — the command line both runners share (runner.h): serve | probe | run. Host code
// only, apart from runner.cu: the device code's compiles (one front end per architecture) need not
// read the command-line library.
#include "runner/runner.h"

#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/vocabulary.h"

namespace gemmlab {

int runner_main(int argc, char** argv, Provider& provider, const char* description) {
    CLI::App app{description};
    app.require_subcommand(1);
    int report_fd = -1, key_fd = -1;
    auto* serve_cmd = app.add_subcommand("serve", "run the judge's requests (stdin) until it says exit");
    serve_cmd->add_option("--report-fd", report_fd)->required();
    serve_cmd->add_option("--report-key-fd", key_fd);
    std::vector<std::string> serve_stages;
    serve_cmd->add_option("--stage", serve_stages,
                          "a stage whose code this runner may load (gemmlab-stages: its own library; repeatable)");
    auto* probe_cmd = app.add_subcommand("probe", "does CUDA start here, and can the judge's buffer be mapped?");
    std::string flags_handle;
    unsigned probe_word = 0x600d;
    probe_cmd->add_option("--flags", flags_handle, "IPC handle of a judge buffer to write --word into");
    probe_cmd->add_option("--word", probe_word);
    probe_cmd->add_option("--report-fd", report_fd)->required();
    probe_cmd->add_option("--report-key-fd", key_fd);
    auto* run_cmd = app.add_subcommand("run", "one call in this process, for compute-sanitizer (values not checked)");
    std::string stage, prec_text = "float", shape_text;
    Shape shape;
    shape.M = 67, shape.N = 45, shape.K = 37, shape.lda = 40, shape.ldb = 48, shape.ldc = 47;
    shape.alpha = 1.5, shape.beta = -0.75;
    unsigned long long seed = 1;
    run_cmd->add_option("--stage", stage, "stage or stage/variant")->required();
    run_cmd->add_option("--prec", prec_text, "float or double");
    run_cmd->add_option("--shape", shape_text, "MxNxK[:lda,ldb,ldc]");
    run_cmd->add_option("--alpha", shape.alpha);
    run_cmd->add_option("--beta", shape.beta);
    run_cmd->add_option("--seed", seed);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (*serve_cmd) {
        provider.allow_stages(serve_stages);
        return serve(provider, ReportChannel(report_fd, key_fd));
    }
    if (*probe_cmd) return probe(ReportChannel(report_fd, key_fd), flags_handle, probe_word);
    const auto prec = parse_precision(prec_text);
    if (!prec) {
        std::cerr << "unknown precision '" << prec_text << "': use float or double\n";
        return 2;
    }
    if (!shape_text.empty()) {
        std::string err;
        auto s = parse_shape(shape_text, &err);
        if (!s) {
            std::cerr << err << "\n";
            return 2;
        }
        s->alpha = shape.alpha, s->beta = shape.beta;
        shape = *s;
    }
    const size_t slash = stage.find('/');
    std::string name = stage.substr(0, slash), variant = slash == std::string::npos ? "" : stage.substr(slash + 1);
    provider.allow_stages({name});
    if (variant.empty())
        for (const StageInfo& s : provider.registry(name))
            if (name == s.name && s.variants.size() > 1) variant = s.variants.front().label;
    return run_standalone(provider, name, variant, *prec, shape, seed);
}

}  // namespace gemmlab
