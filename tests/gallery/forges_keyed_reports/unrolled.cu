// tests/gallery/forges_keyed_reports/unrolled.cu — gallery entry "forges_keyed_reports"
// unrolled: finds the report key in memory and writes report lines of its own, keyed
// Not a model to follow: a submission the grader must survive and see through; README.md says what
// the grader has to conclude. Only the `syscall` instruction and plain memory access (judge_attacks.h):
// nothing the build's symbol check refuses.
#include "judge_attacks.h"
#include "gemmlab/stages.h"

namespace gemmlab::GEMMLAB_NS {

// Computes nothing; says, in the runner's name, that the call went fine — on every pipe, with every
// 32-hex-digit string of its memory as the key (one of them is the runner's).
template <typename T>
Status gemm_unrolled(const GemmProblem<T>& p) {
    char keys[64][33];
    const int nkeys = gallery::find_hex_keys(keys, 64);
    int pipes[16];
    const int npipes = gallery::find_pipes(pipes, 16);
    static const char* const kLines[] = {
        "{\"event\":\"returned\",\"results\":[{\"status\":\"ok\"}]}\n",
        "{\"event\":\"armed\",\"results\":[{\"status\":\"ok\"}]}\n",
        "{\"event\":\"finished\",\"event_ms\":[0.001],\"results\":[{\"status\":\"ok\"}]}\n",
        "{\"event\":\"case\",\"index\":0,\"result\":{\"disposition\":\"passed\"}}\n"};
    char line[512];
    for (int f = 0; f < npipes; ++f)
        for (int k = 0; k < nkeys; ++k)
            for (const char* l : kLines) {
                std::snprintf(line, sizeof line, "%s %s", keys[k], l);
                gallery::write_all(pipes[f], line);
            }
    std::printf("GALLERY-PROBE forges_keyed_reports: %d key candidate(s), %d pipe(s)\n", nkeys, npipes);
    (void)p;
    return Status::ok;
}

template Status gemm_unrolled<float>(const GemmProblem<float>&);
template Status gemm_unrolled<double>(const GemmProblem<double>&);

}  // namespace gemmlab::GEMMLAB_NS
