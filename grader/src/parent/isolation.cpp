// isolation.cpp — fork/exec of grader children with a report pipe, limits and a process group.
#include "parent/isolation.h"
#include "parent/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gemmlab {
namespace {

using Clock = std::chrono::steady_clock;

// The longest report line kept (a case report with its picture is a few kilobytes).
constexpr size_t kMaxReportLine = 1 << 20;

// How long a child that reported "done" or closed its pipe may take to exit (CUDA tears its
// context down on exit, which takes a moment), and how often the parent looks.
constexpr double kExitGraceSeconds = 5.0;
constexpr useconds_t kReapPollMicroseconds = 20000;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string read_tail(const std::string& path, size_t max_bytes, size_t max_lines) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    const std::streamoff start = size > std::streamoff(max_bytes) ? size - std::streamoff(max_bytes) : 0;
    in.seekg(start);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t lines = 0, pos = text.size();
    while (pos > 0) {
        const size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) break;
        if (nl + 1 < text.size() && ++lines > max_lines) {
            text = text.substr(nl + 1);
            break;
        }
        pos = nl;
    }
    return text;
}

void kill_group(pid_t pid) {
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
}

// A fresh random key per child: 32 hex digits.
std::string make_report_key() {
    unsigned char bytes[16] = {};
    size_t got = 0;
    while (got < sizeof bytes) {
        const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + strerror(errno));
        got += static_cast<size_t>(n);
    }
    static const char hex[] = "0123456789abcdef";
    std::string key;
    for (unsigned char b : bytes) key += hex[b >> 4], key += hex[b & 15];
    return key;
}

// What the parent records of a line that did not carry the child's key (at most this much of it).
constexpr size_t kForgedSample = 200;

}  // namespace

std::string describe_end(const ChildOutcome& o) {
    std::ostringstream os;
    if (o.timed_out) os << "killed after " << o.timeout_reason;
    else if (o.signal) os << "killed by signal " << o.signal << " (" << strsignal(o.signal) << ")";
    else os << "exited with code " << o.exit_code;
    return os.str();
}

ChildOutcome run_isolated(const std::string& self_path, const std::vector<std::string>& args,
                          const ChildLimits& limits,
                          const std::function<void(const nlohmann::json&)>& on_event) {
    ChildOutcome out;
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
    // The report key: every line the child's grader code writes starts with it, so a line that
    // stage code writes into the report pipe (it may find the descriptor) is recognised as forged.
    // The child reads it from its own pipe at start-up and closes that pipe before any stage runs.
    const std::string key = make_report_key();
    int key_fds[2];
    if (pipe(key_fds) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));

    const char* tmpdir = std::getenv("TMPDIR");
    std::string log_path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gemmlab-child-XXXXXX";
    std::vector<char> tmpl(log_path.begin(), log_path.end());
    tmpl.push_back('\0');
    const int log_fd = mkstemp(tmpl.data());
    if (log_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + strerror(errno));
    log_path = tmpl.data();

    constexpr int kReportFd = 3, kKeyFd = 4;
    std::vector<std::string> argv_s{self_path};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    argv_s.push_back("--report-fd");
    argv_s.push_back(std::to_string(kReportFd));
    argv_s.push_back("--report-key-fd");
    argv_s.push_back(std::to_string(kKeyFd));
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    const auto t0 = Clock::now();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);  // its own group: a timeout kills everything it started
        dup2(log_fd, STDOUT_FILENO);
        dup2(log_fd, STDERR_FILENO);
        // The ends the child does not use, then the two it keeps: copied out of the way first and
        // into place after, since pipe() and mkstemp() may have returned 3 or 4 themselves.
        close(fds[0]);
        close(key_fds[1]);
        const int report_end = fcntl(fds[1], F_DUPFD, 10), key_end = fcntl(key_fds[0], F_DUPFD, 10);
        dup2(report_end, kReportFd);
        dup2(key_end, kKeyFd);
#ifdef SYS_close_range
        // Nothing else the grader holds (or inherited) reaches the stage.
        syscall(SYS_close_range, kKeyFd + 1, ~0u, 0);
#else
        for (const int fd : {report_end, key_end, fds[1], key_fds[0], log_fd})
            if (fd > kKeyFd) close(fd);  // 3 and 4 now hold the pipes
#endif
        const int in = open("/dev/null", O_RDONLY);
        if (in > STDIN_FILENO) dup2(in, STDIN_FILENO), close(in);
        struct rlimit fsize{limits.output_bytes, limits.output_bytes};
        setrlimit(RLIMIT_FSIZE, &fsize);
        signal(SIGXFSZ, SIG_IGN);  // past the cap, writes fail instead of killing the child
        enter_child_sandbox(argv.data(), key);  // sandbox.h: scratch dir, report fd, seccomp, Landlock
        execv(argv[0], argv.data());
        _exit(127);
    }
    setpgid(pid, pid);
    close(fds[1]);
    close(log_fd);
    close(key_fds[0]);
    {
        const std::string line = key + "\n";  // 33 bytes: fits the pipe's buffer, never blocks
        ssize_t ignored = write(key_fds[1], line.data(), line.size());
        (void)ignored;
        close(key_fds[1]);
    }
    const std::string prefix = ReportChannel::key_prefix(key);

    std::string pending;
    auto last_report = Clock::now();
    bool open_pipe = true, reaped = false;
    int status = 0;
    while (open_pipe && !out.finished) {
        const double idle_left = limits.idle_seconds - since(last_report);
        const double total_left = limits.total_seconds - since(t0);
        if (idle_left <= 0 || total_left <= 0) {
            out.timed_out = true;
            std::ostringstream os;
            if (total_left <= 0) os << "its time limit of " << limits.total_seconds << " s";
            else os << limits.idle_seconds << " s without progress";
            out.timeout_reason = os.str();
            kill_group(pid);
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int wait_ms = static_cast<int>(std::min(idle_left, total_left) * 1000) + 1;
        const int ready = poll(&p, 1, std::min(wait_ms, 1000));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            // A child that exited while something it started still holds the pipe open.
            if (waitpid(pid, &status, WNOHANG) == pid) reaped = true, open_pipe = false;
            continue;
        }
        char buf[65536];
        const ssize_t n = read(fds[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            open_pipe = false;
            break;
        }
        pending.append(buf, static_cast<size_t>(n));
        // A report is one short line; an endless line is noise and must not exhaust the parent.
        if (pending.size() > kMaxReportLine && pending.find('\n') == std::string::npos) pending.clear();
        size_t nl;
        while ((nl = pending.find('\n')) != std::string::npos) {
            std::string line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            if (line.compare(0, prefix.size(), prefix) != 0) {
                // Not written by the child's grader code. The parent records that it happened, in
                // order, as an event of its own, which the child cannot write.
                if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
                ++out.forged_lines;
                std::string sample = line.substr(0, kForgedSample);
                for (char& c : sample)
                    if (c < 0x20 || c > 0x7e) c = '?';  // any bytes at all: keep printable ASCII
                const nlohmann::json forged{{"event", "forged"}, {"line", sample}};
                out.events.push_back(forged);
                if (on_event) on_event(forged);
                continue;
            }
            line.erase(0, prefix.size());
            nlohmann::json ev = nlohmann::json::parse(line, nullptr, false);
            if (ev.is_discarded() || !ev.is_object() || !ev.contains("event")) continue;
            last_report = Clock::now();
            if (ev["event"] == "done") out.finished = true;
            out.events.push_back(ev);
            if (on_event) on_event(ev);
        }
    }
    close(fds[0]);

    // The pipe closed or "done" arrived: the child is ending. Give it a moment, then make sure.
    const auto ending = Clock::now();
    bool killed = false;
    while (!reaped) {
        const pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid || w < 0) break;
        if (!killed && since(ending) > kExitGraceSeconds) kill_group(pid), killed = true;
        usleep(kReapPollMicroseconds);
    }
    kill_group(pid);  // anything it left behind in its group
    remove_child_scratch(pid);
    if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
    if (out.timed_out) out.signal = 0;
    out.output_tail = read_tail(log_path, 4096, 20);
    unlink(log_path.c_str());
    out.seconds = since(t0);
    return out;
}

}  // namespace gemmlab
