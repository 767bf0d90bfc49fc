// Tests of isolation.h with real child processes: bash scripts stand in for the grader's child.
// run_isolated runs `<path> <args...> --report-fd N --report-key-fd K`; with path /bin/bash and
// args {"-c", script, "sh"}, the script sees "--report-fd" as $1, the descriptor as $2 and the
// descriptor of the report key as $4, reads the key, and reports the way a grader child does: one
// JSON object per line, each after the key. (bash, not sh: the sandbox moves the report pipe to
// a high descriptor, and dash cannot redirect to descriptors above 9.)
//
// The sandbox (sandbox.h) is switched off here with GEMMLAB_SANDBOX=off: its seccomp filter
// forbids the fork a shell needs to run `sleep`, and these tests are about what the parent does
// with a child that misbehaves, whatever stopped or did not stop it. The sandbox has its own tests.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "judge/isolation.h"

using namespace gemmlab;

namespace {

// Every script starts by checking its arguments and defining report().
const std::string kPrelude =
    "[ \"$1\" = --report-fd ] && [ \"$3\" = --report-key-fd ] || exit 99\n"
    "fd=$2\n"
    "read -r key <&$4; eval \"exec $4<&-\"\n"
    "report() { printf '%s %s\\n' \"$key\" \"$1\" >&$fd; }\n"
    "forge() { printf '%s\\n' \"$1\" >&$fd; }\n";  // what stage code could write: no key

const std::string kStart = "report '{\"event\":\"start\",\"cases\":2}'\n";
const std::string kCaseStart = "report '{\"event\":\"case_start\",\"index\":0}'\n";
const std::string kDone = "report '{\"event\":\"done\"}'\n";

ChildLimits quick_limits() {
    ChildLimits l;
    l.idle_seconds = 1.0;
    l.total_seconds = 10.0;
    return l;
}

// Sets an environment variable for one scope and restores what was there.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const char* value) : name_(name) {
        if (const char* old = std::getenv(name)) had_ = true, old_ = old;
        setenv(name, value, 1);
    }
    ~ScopedEnv() {
        if (had_) setenv(name_, old_.c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    bool had_ = false;
    std::string old_;
};

ChildOutcome run_script(const std::string& body, const ChildLimits& limits = quick_limits(),
                        const std::function<void(const nlohmann::json&)>& on_event = nullptr) {
    const ScopedEnv no_sandbox("GEMMLAB_SANDBOX", "off");
    return run_isolated("/bin/bash", {"-c", kPrelude + body, "sh"}, limits, on_event);
}

// The events the script itself reported (the sandbox adds one of its own before exec).
std::vector<nlohmann::json> reported(const ChildOutcome& o) {
    std::vector<nlohmann::json> mine;
    for (const nlohmann::json& ev : o.events)
        if (ev.value("event", "") != "sandbox") mine.push_back(ev);
    return mine;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether a process is gone (or a zombie, which is as good as gone once it is nobody's child).
bool gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

}  // namespace

TEST_CASE("a child that reports and says done has finished" * doctest::timeout(20)) {
    std::vector<std::string> seen;
    const ChildOutcome o = run_script(kStart + kCaseStart + kDone + "exit 0\n", quick_limits(),
                                      [&](const nlohmann::json& ev) {
                                          if (ev["event"] != "sandbox") seen.push_back(ev["event"]);
                                      });
    CHECK(o.finished);
    CHECK_FALSE(o.timed_out);
    CHECK(o.exit_code == 0);
    CHECK(o.signal == 0);
    REQUIRE(reported(o).size() == 3);
    CHECK(reported(o)[1]["event"] == "case_start");
    CHECK(seen == std::vector<std::string>{"start", "case_start", "done"});
    CHECK(describe_end(o) == "exited with code 0");
}

TEST_CASE("exit(0) in the middle is not finished" * doctest::timeout(20)) {
    const ChildOutcome o = run_script(kStart + kCaseStart + "exit 0\n" + kDone);
    CHECK_FALSE(o.finished);
    CHECK_FALSE(o.timed_out);
    CHECK(o.exit_code == 0);
    CHECK(reported(o).size() == 2);
}

TEST_CASE("a child that kills itself with SIGSEGV is reported with the signal" * doctest::timeout(20)) {
    const ChildOutcome o = run_script(kStart + kCaseStart + "kill -SEGV $$\nsleep 5\n" + kDone);
    CHECK_FALSE(o.finished);
    CHECK_FALSE(o.timed_out);
    CHECK(o.signal == SIGSEGV);
    CHECK(contains(describe_end(o), "killed by signal 11"));
    CHECK(reported(o).size() == 2);
}

TEST_CASE("a child silent past the idle limit is killed, promptly" * doctest::timeout(20)) {
    const auto t0 = std::chrono::steady_clock::now();
    const ChildOutcome o = run_script(kStart + kCaseStart + "sleep 30\n" + kDone);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(o.timed_out);
    CHECK_FALSE(o.finished);
    CHECK(o.signal == 0);  // the parent's kill is not the child's crash
    CHECK(contains(o.timeout_reason, "without progress"));
    CHECK(contains(describe_end(o), "killed after"));
    CHECK(took < 5.0);
    CHECK(reported(o).size() == 2);
}

TEST_CASE("a child that keeps reporting but never ends hits the total limit" * doctest::timeout(20)) {
    ChildLimits limits = quick_limits();
    limits.total_seconds = 1.5;
    const auto t0 = std::chrono::steady_clock::now();
    const ChildOutcome o =
        run_script(kStart + "while :; do report '{\"event\":\"tick\"}'; sleep 0.1; done\n", limits);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(o.timed_out);
    CHECK(contains(o.timeout_reason, "time limit of 1.5 s"));
    CHECK(took < 5.0);
    CHECK(reported(o).size() > 3);
}

TEST_CASE("what a child prints is kept for the student, never parsed as a report" * doctest::timeout(20)) {
    const ChildOutcome o = run_script(kStart +
                                      "echo '{\"event\":\"done\"}'\n"  // a forged "done" on stdout
                                      "echo 'garbage from the kernel' 1>&2\n"
                                      "report 'not json at all'\n"
                                      "report '[1, 2, 3]'\n"
                                      "report '{\"no_event\": true}'\n"
                                      "printf '{\"event\":\"case_st' >&$fd\n"  // a torn line, never ended
                                      "exit 3\n");
    CHECK_FALSE(o.finished);
    CHECK(o.exit_code == 3);
    REQUIRE(reported(o).size() == 1);
    CHECK(reported(o)[0]["event"] == "start");
    CHECK(contains(o.output_tail, "{\"event\":\"done\"}"));
    CHECK(contains(o.output_tail, "garbage from the kernel"));
}

TEST_CASE("a grandchild that keeps the report pipe open does not hold the parent" * doctest::timeout(30)) {
    SUBCASE("after done") {
        const auto t0 = std::chrono::steady_clock::now();
        const ChildOutcome o = run_script(kStart + "sleep 30 &\n" + kDone + "exit 0\n");
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK(o.finished);
        CHECK(o.exit_code == 0);
        CHECK(took < 5.0);
    }
    SUBCASE("without done: the child's exit is noticed, and what it left behind is killed") {
        const std::string pid_file = "/tmp/gemmlab-test-isolation-" + std::to_string(getpid());
        const auto t0 = std::chrono::steady_clock::now();
        const ChildOutcome o = run_script(kStart + "sleep 30 &\necho $! > " + pid_file + "\nexit 0\n");
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        CHECK_FALSE(o.finished);
        CHECK_FALSE(o.timed_out);
        CHECK(o.exit_code == 0);
        CHECK(took < 5.0);
        std::ifstream in(pid_file);
        pid_t left = 0;
        in >> left;
        std::remove(pid_file.c_str());
        REQUIRE(left > 0);
        bool ended = false;
        for (int i = 0; i < 50 && !ended; ++i) {
            ended = gone(left);
            if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        CHECK(ended);
    }
}

TEST_CASE("a child that cannot be started exits with 127" * doctest::timeout(20)) {
    const ScopedEnv no_sandbox("GEMMLAB_SANDBOX", "off");
    const ChildOutcome o = run_isolated("/nonexistent/gemmlab", {"child-check"}, quick_limits(), nullptr);
    CHECK_FALSE(o.finished);
    CHECK(o.exit_code == 127);
    CHECK(reported(o).empty());
}

TEST_CASE("a child's output is capped, and writing past the cap does not kill it" * doctest::timeout(20)) {
    ChildLimits limits = quick_limits();
    limits.output_bytes = 64 * 1024;
    const ChildOutcome o =
        run_script(kStart + "yes xxxxxxxxxxxxxxx 2>/dev/null | head -c 5000000 2>/dev/null\necho last words 1>&2\n" +
                       kDone + "exit 0\n",
                   limits);
    CHECK(o.finished);
    CHECK(o.exit_code == 0);
    CHECK(o.output_tail.size() <= 4096);
}

TEST_CASE("ReportChannel writes whole lines the parent reads back, after the key" * doctest::timeout(20)) {
    int fds[2], key_fds[2];
    REQUIRE(pipe(fds) == 0);
    REQUIRE(pipe(key_fds) == 0);
    REQUIRE(write(key_fds[1], "0123abcd\n", 9) == 9);
    close(key_fds[1]);
    const ReportChannel channel(fds[1], key_fds[0]);
    CHECK(fcntl(key_fds[0], F_GETFD) == -1);  // the key's pipe is closed once read
    channel.send({{"event", "case"}, {"index", 3}});
    close(fds[1]);
    char buf[256];
    const ssize_t n = read(fds[0], buf, sizeof buf);
    close(fds[0]);
    REQUIRE(n > 0);
    const std::string line(buf, static_cast<size_t>(n));
    CHECK(line.back() == '\n');
    REQUIRE(line.rfind("0123abcd ", 0) == 0);
    CHECK(nlohmann::json::parse(line.substr(9))["index"] == 3);
}

TEST_CASE("lines without the child's key are kept out and reported as forged, in order" * doctest::timeout(20)) {
    std::vector<std::string> seen;
    const ChildOutcome o = run_script(kStart +
                                          "forge '{\"event\":\"case\",\"result\":{\"disposition\":\"passed\"}}'\n"
                                          "forge '{\"event\":\"done\"}'\n" +
                                          kCaseStart + kDone + "exit 0\n",
                                      quick_limits(), [&](const nlohmann::json& ev) { seen.push_back(ev.value("event", "")); });
    CHECK(o.finished);
    CHECK(o.forged_lines == 2);
    const std::vector<std::string> expected{"start", "forged", "forged", "case_start", "done"};
    std::vector<std::string> mine;
    for (const std::string& e : seen)
        if (e != "sandbox") mine.push_back(e);
    CHECK(mine == expected);
    std::vector<std::string> forged;  // what was forged, quoted in the message
    for (const nlohmann::json& ev : o.events)
        if (ev.value("event", "") == "forged") forged.push_back(ev.value("line", ""));
    REQUIRE(forged.size() == 2);
    CHECK(contains(forged[0], "\"disposition\":\"passed\""));
    CHECK(forged[1] == "{\"event\":\"done\"}");
}

TEST_CASE("a key guessed wrong does not pass" * doctest::timeout(20)) {
    const ChildOutcome o = run_script(kStart + "forge \"0123456789abcdef0123456789abcdef {\\\"event\\\":\\\"done\\\"}\"\n"
                                      "sleep 0.2\n" + kDone + "exit 0\n");
    CHECK(o.finished);
    CHECK(o.forged_lines == 1);
}

// ---- a runner the judge talks to: requests on stdin, keyed reports back (ChildProcess) ----------

namespace {

// An echo runner: answers each request line with {"event":"returned","got":<the line>}, until "exit".
const std::string kEchoRunner =
    "while read -r line; do\n"
    "  case \"$line\" in *'\"exit\"'*) report '{\"event\":\"done\"}'; exit 0;; esac\n"
    "  report \"{\\\"event\\\":\\\"returned\\\",\\\"got\\\":$line}\"\n"
    "done\n";

std::unique_ptr<ChildProcess> start(const std::string& body, const ChildLimits& limits = quick_limits()) {
    const ScopedEnv no_sandbox("GEMMLAB_SANDBOX", "off");
    return std::make_unique<ChildProcess>("/bin/bash", std::vector<std::string>{"-c", kPrelude + body, "sh"}, limits);
}

}  // namespace

TEST_CASE("the judge sends requests and reads each answer, in order, then the runner exits on request" *
          doctest::timeout(20)) {
    auto runner = start(kEchoRunner);
    CHECK(runner->sandbox()["event"] == "sandbox");
    for (int i = 0; i < 3; ++i) {
        REQUIRE(runner->send({{"op", "call"}, {"i", i}}));
        bool timed_out = false;
        const auto ev = runner->receive(5, &timed_out);
        REQUIRE(ev);
        CHECK((*ev)["event"] == "returned");
        CHECK((*ev)["got"]["i"] == i);
    }
    REQUIRE(runner->send({{"op", "exit"}}));
    const auto done = runner->receive(5);
    REQUIRE(done);
    CHECK((*done)["event"] == "done");
    const ChildEnd end = runner->reap(5);
    CHECK(end.exit_code == 0);
    CHECK_FALSE(end.timed_out);
}

TEST_CASE("a runner that does not answer in time is reported as such, and killed when the judge says so" *
          doctest::timeout(20)) {
    auto runner = start("sleep 30\n");
    const pid_t pid = runner->pid();
    bool timed_out = false;
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_FALSE(runner->receive(0.5, &timed_out));
    CHECK(timed_out);
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 3);
    const ChildEnd end = runner->reap(5, "a call that did not end");
    CHECK(end.timed_out);
    CHECK(describe_end(end) == "killed after a call that did not end");
    CHECK(gone(pid));
}

TEST_CASE("lines without the runner's key are kept aside as forged, never returned" * doctest::timeout(20)) {
    auto runner = start("forge '{\"event\":\"returned\",\"forged\":true}'\nreport '{\"event\":\"returned\"}'\nsleep 1\n");
    const auto ev = runner->receive(5);
    REQUIRE(ev);
    CHECK_FALSE(ev->contains("forged"));
    CHECK(runner->forged_lines() == 1);
    CHECK(contains(runner->forged()[0], "forged"));
    runner->reap(0);
}

TEST_CASE("a runner that dies is noticed: receive returns nothing, send fails, reap says how" * doctest::timeout(20)) {
    auto runner = start("kill -SEGV $$\n");
    bool timed_out = false;
    CHECK_FALSE(runner->receive(5, &timed_out));
    CHECK_FALSE(timed_out);
    // The pipe closes as the process dies; waitpid may see the end a moment later.
    for (int i = 0; i < 200 && !runner->exited(); ++i) usleep(10000);
    CHECK(runner->exited());
    CHECK_FALSE(runner->send({{"op", "call"}}));  // nobody reads its stdin any more
    const ChildEnd end = runner->reap(1);
    CHECK(end.signal == SIGSEGV);
    CHECK(contains(describe_end(end), "Segmentation fault"));
}
