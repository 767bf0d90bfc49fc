// results_io.cpp — the creation time and atomic writes of results files (see results_io.h).
#include "judge/results_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>

namespace gemmlab {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

void write_text_atomically(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + strerror(errno));
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string why = strerror(errno);
            close(fd);
            unlink(tmp.c_str());
            throw std::runtime_error("cannot write " + tmp + ": " + why);
        }
        done += static_cast<size_t>(n);
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        unlink(tmp.c_str());
        throw std::runtime_error("cannot flush " + tmp + ": " + strerror(errno));
    }
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = strerror(errno);
        unlink(tmp.c_str());
        throw std::runtime_error("cannot move " + tmp + " to " + path + ": " + why);
    }
}

void write_json_atomically(const std::string& path, const nlohmann::json& j) {
    write_text_atomically(path, j.dump(2) + "\n");
}

void add_fingerprint(nlohmann::json& submission, const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read the fingerprint file " + path + ": " + strerror(errno));
    const nlohmann::json fp = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!fp.is_object() || !fp.contains("fingerprint") || !fp["fingerprint"].is_string() ||
        fp["fingerprint"].get<std::string>().rfind("sha256:", 0) != 0)
        throw std::runtime_error(path + " holds no fingerprint (expected the JSON object of "
                                 "grader/scripts/fingerprint.py --json, with \"fingerprint\": \"sha256:...\")");
    for (const char* key : {"scheme", "fingerprint", "files"})
        if (fp.contains(key)) submission[key] = fp[key];
}

}  // namespace gemmlab
