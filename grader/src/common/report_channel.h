// report_channel.h — how a grader child talks to its parent: one keyed JSON line per report on the
// pipe the parent gave it (parent/isolation.h starts children and reads these lines). Shared: the
// parent checks the key prefix, the child writes the lines.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gemmlab {

// In the child: writes one report line (whole, or not at all) to the report descriptor, prefixed
// with the key the parent sent over `key_fd` (read and closed by the constructor, before any stage
// code runs). The parent keeps only lines that carry the key; every other line becomes a
// {"event":"forged","line":...} event of the parent's, and the stage run is rejected for it.
class ReportChannel {
public:
    explicit ReportChannel(int fd, int key_fd = -1);
    void send(const nlohmann::json& event) const;
    static std::string key_prefix(const std::string& key);  // what starts every keyed line

private:
    int fd_;
    std::string key_;
};

// The path of the running executable (/proc/self/exe).
std::string self_executable();

}  // namespace gemmlab
