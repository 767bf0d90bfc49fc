// isolation.cpp — runner processes (isolation.h): spawn, talk, reap.
#include "judge/isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gemmlab {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The longest report line kept (a case report with its picture is a few kilobytes).
constexpr size_t kMaxReportLine = 1 << 20;
// What the judge records of a line that did not carry the child's key (at most this much of it).
constexpr size_t kForgedSample = 200;
// How often a wait looks whether the child has exited meanwhile.
constexpr double kPollSliceSeconds = 0.2;
constexpr useconds_t kReapPollMicroseconds = 5000;
// How long a child that reported "done" may take to exit (CUDA tears its context down on exit).
constexpr double kExitGraceSeconds = 5.0;
// The descriptors a child finds its pipes on before the sandbox moves the report pipe.
constexpr int kReportFd = 3, kKeyFd = 4, kStatusFd = 5, kRulesetFd = 6;

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

void make_pipe(int fds[2]) {
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + strerror(errno));
}

// In the child: closes every descriptor from `low` up (close_range where the kernel has it).
void close_from(int low) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, low, ~0u, 0) == 0) return;
#endif
    rlimit lim{};
    getrlimit(RLIMIT_NOFILE, &lim);
    const int top = static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 65536));
    for (int fd = low; fd < top; ++fd) close(fd);
}

// In the child, between fork and exec: only system calls (the judge's CUDA threads make anything
// else unsafe here). Puts each descriptor where the sandbox expects it, then applies the plan.
[[noreturn]] void child_side(SandboxPlan& plan, int log_fd, int stdin_read, int report_write, int key_read,
                             int status_write, size_t output_bytes) {
    setpgid(0, 0);  // its own group: a timeout kills everything it started
    // Out of the way first (any of them may sit on 0..6), then into place.
    const int tmp_log = fcntl(log_fd, F_DUPFD, 16), tmp_in = fcntl(stdin_read, F_DUPFD, 16),
              tmp_report = fcntl(report_write, F_DUPFD, 16), tmp_key = fcntl(key_read, F_DUPFD, 16),
              tmp_status = fcntl(status_write, F_DUPFD, 16),
              tmp_rules = plan.landlock_ruleset >= 0 ? fcntl(plan.landlock_ruleset, F_DUPFD, 16) : -1;
    dup2(tmp_in, STDIN_FILENO);
    dup2(tmp_log, STDOUT_FILENO);
    dup2(tmp_log, STDERR_FILENO);
    dup2(tmp_report, kReportFd);
    dup2(tmp_key, kKeyFd);
    dup2(tmp_status, kStatusFd);
    fcntl(kStatusFd, F_SETFD, FD_CLOEXEC);  // closes at exec: the judge then reads end of file
    if (tmp_rules >= 0) {
        dup2(tmp_rules, kRulesetFd);
        plan.landlock_ruleset = kRulesetFd;
    }
    close_from(plan.landlock_ruleset >= 0 ? kRulesetFd + 1 : kStatusFd + 1);  // nothing else of the judge
    const rlimit fsize{output_bytes, output_bytes};
    setrlimit(RLIMIT_FSIZE, &fsize);
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGXFSZ, &ignore, nullptr);  // past the cap, writes fail instead of killing the child
    apply_sandbox_and_exec(plan, kStatusFd);
}

}  // namespace

ChildProcess::ChildProcess(const std::string& exe, const std::vector<std::string>& args, const ChildLimits& limits,
                           const SandboxOptions& sandbox_options) {
    // The report key: every line the child's grader code writes starts with it, so a line that stage
    // code writes into the report pipe (it may find the descriptor) is recognised as forged.
    const std::string key = make_report_key();
    int report[2], key_pipe[2], in[2], status[2];
    make_pipe(report);
    make_pipe(key_pipe);
    make_pipe(in);
    make_pipe(status);
    const char* tmpdir = std::getenv("TMPDIR");
    log_path_ = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/gemmlab-child-XXXXXX";
    std::vector<char> tmpl(log_path_.begin(), log_path_.end());
    tmpl.push_back('\0');
    const int log_fd = mkostemp(tmpl.data(), O_CLOEXEC);
    if (log_fd < 0) throw std::runtime_error(std::string("mkstemp: ") + strerror(errno));
    log_path_ = tmpl.data();

    std::vector<std::string> child_args = args;
    child_args.insert(child_args.end(), {"--report-fd", std::to_string(kReportFd), "--report-key-fd", std::to_string(kKeyFd)});
    SandboxPlan plan = prepare_sandbox(exe, child_args, sandbox_options);
    scratch_ = plan.scratch;

    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error(std::string("fork: ") + strerror(errno));
    if (pid_ == 0) child_side(plan, log_fd, in[0], report[1], key_pipe[0], status[1], limits.output_bytes);

    setpgid(pid_, pid_);
    close(report[1]);
    close(key_pipe[0]);
    close(in[0]);
    close(status[1]);
    close(log_fd);
    report_fd_ = report[0];
    stdin_fd_ = in[1];
    {
        const std::string line = key + "\n";  // 33 bytes: fits the pipe's buffer, never blocks
        ssize_t ignored = write(key_pipe[1], line.data(), line.size());
        (void)ignored;
        close(key_pipe[1]);
    }
    prefix_ = ReportChannel::key_prefix(key);
    // What the sandbox did: one status before execve (and a second one if execve failed).
    SandboxStatus st;
    SandboxStatus got;
    size_t have = 0;
    for (;;) {
        const ssize_t n = read(status[0], reinterpret_cast<char*>(&got) + have, sizeof got - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        have += static_cast<size_t>(n);
        if (have == sizeof got) st = got, have = 0;
    }
    close(status[0]);
    sandbox_ = nlohmann::json::parse(describe_sandbox(plan, st), nullptr, false);
    if (st.exec_errno) sandbox_["exec_error"] = strerror(st.exec_errno);
    signal(SIGPIPE, SIG_IGN);  // a child that stops reading its stdin must not end the judge
}

ChildProcess::~ChildProcess() { reap(0); }

bool ChildProcess::send(const nlohmann::json& message) {
    if (stdin_fd_ < 0) return false;
    const std::string line = message.dump() + "\n";
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = write(stdin_fd_, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<size_t>(n);
    }
    return true;
}

std::optional<nlohmann::json> ChildProcess::receive(double seconds, bool* timed_out) {
    if (timed_out) *timed_out = false;
    const auto t0 = Clock::now();
    for (;;) {
        size_t nl;
        while ((nl = pending_.find('\n')) != std::string::npos) {
            std::string line = pending_.substr(0, nl);
            pending_.erase(0, nl + 1);
            if (line.compare(0, prefix_.size(), prefix_) != 0 || prefix_.empty()) {
                // Not written by the child's grader code: recorded, never believed.
                if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
                std::string sample = line.substr(0, kForgedSample);
                for (char& c : sample)
                    if (c < 0x20 || c > 0x7e) c = '?';  // any bytes at all: keep printable ASCII
                forged_.push_back(sample);
                continue;
            }
            line.erase(0, prefix_.size());
            nlohmann::json ev = nlohmann::json::parse(line, nullptr, false);
            if (ev.is_discarded() || !ev.is_object() || !ev.contains("event")) continue;
            return ev;
        }
        if (report_fd_ < 0) return std::nullopt;
        const double left = seconds - since(t0);
        if (left <= 0) {
            if (timed_out) *timed_out = true;
            return std::nullopt;
        }
        pollfd p{report_fd_, POLLIN, 0};
        const int ready = poll(&p, 1, static_cast<int>(std::min(left, kPollSliceSeconds) * 1000) + 1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) {
            // A child that exited while something it started still holds the pipe open.
            if (exited()) {
                close(report_fd_);
                report_fd_ = -1;
            }
            continue;
        }
        char buf[65536];
        const ssize_t n = read(report_fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            close(report_fd_);
            report_fd_ = -1;
            continue;
        }
        pending_.append(buf, static_cast<size_t>(n));
        // A report is one short line; an endless line is noise and must not exhaust the judge.
        if (pending_.size() > kMaxReportLine && pending_.find('\n') == std::string::npos) pending_.clear();
    }
}

bool ChildProcess::exited() {
    if (waited_) return true;
    if (pid_ > 0 && waitpid(pid_, &status_, WNOHANG) == pid_) waited_ = true;
    return waited_;
}

void ChildProcess::kill_group() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    if (!waited_) kill(pid_, SIGKILL);
}

ChildEnd ChildProcess::reap(double grace_seconds, const std::string& killed_for) {
    if (reaped_) return end_;
    reaped_ = true;
    if (stdin_fd_ >= 0) close(stdin_fd_), stdin_fd_ = -1;
    if (!killed_for.empty()) {
        end_.timed_out = true;
        end_.timeout_reason = killed_for;
        kill_group();
    }
    const auto t0 = Clock::now();
    bool killed = !killed_for.empty();
    while (!exited()) {
        if (!killed && since(t0) >= grace_seconds) kill_group(), killed = true;
        usleep(kReapPollMicroseconds);
    }
    kill_group();  // anything it left behind in its group
    if (report_fd_ >= 0) close(report_fd_), report_fd_ = -1;
    remove_scratch(scratch_);
    if (WIFEXITED(status_)) end_.exit_code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_) && !end_.timed_out) end_.signal = WTERMSIG(status_);
    end_.output_tail = read_tail(log_path_, 4096, 20);
    unlink(log_path_.c_str());
    return end_;
}

std::string describe_end(const ChildEnd& e) {
    std::ostringstream os;
    if (e.timed_out) os << "killed after " << e.timeout_reason;
    else if (e.signal) os << "killed by signal " << e.signal << " (" << strsignal(e.signal) << ")";
    else os << "exited with code " << e.exit_code;
    return os.str();
}

std::string describe_end(const ChildOutcome& o) {
    ChildEnd e;
    e.timed_out = o.timed_out;
    e.timeout_reason = o.timeout_reason;
    e.exit_code = o.exit_code;
    e.signal = o.signal;
    return describe_end(e);
}

ChildOutcome run_isolated(const std::string& exe, const std::vector<std::string>& args, const ChildLimits& limits,
                          const std::function<void(const nlohmann::json&)>& on_event,
                          const SandboxOptions& sandbox) {
    ChildOutcome out;
    const auto t0 = Clock::now();
    ChildProcess child(exe, args, limits, sandbox);
    auto record = [&](const nlohmann::json& ev) {
        out.events.push_back(ev);
        if (on_event) on_event(ev);
    };
    record(child.sandbox());
    size_t forged_seen = 0;
    auto last_report = Clock::now();
    std::string killed_for;
    while (!out.finished) {
        const double idle_left = limits.idle_seconds - since(last_report);
        const double total_left = limits.total_seconds - since(t0);
        if (idle_left <= 0 || total_left <= 0) {
            std::ostringstream os;
            if (total_left <= 0) os << "its time limit of " << limits.total_seconds << " s";
            else os << limits.idle_seconds << " s without progress";
            killed_for = os.str();
            break;
        }
        bool timed_out = false;
        const std::optional<nlohmann::json> ev = child.receive(std::min(idle_left, total_left), &timed_out);
        for (; forged_seen < child.forged().size(); ++forged_seen)
            record({{"event", "forged"}, {"line", child.forged()[forged_seen]}});
        if (!ev) {
            if (timed_out) continue;
            break;  // the pipe closed: the child is ending
        }
        last_report = Clock::now();
        if ((*ev)["event"] == "done") out.finished = true;
        record(*ev);
    }
    const ChildEnd end = child.reap(kExitGraceSeconds, killed_for);
    out.forged_lines = child.forged_lines();
    out.timed_out = end.timed_out;
    out.timeout_reason = end.timeout_reason;
    out.exit_code = end.exit_code;
    out.signal = end.signal;
    out.output_tail = end.output_tail;
    out.seconds = since(t0);
    return out;
}

}  // namespace gemmlab
