// sandbox_probe.cpp — the grader's process isolation and sandbox (isolation.cpp + sandbox.cpp), driven
// without CUDA, so CI can watch hostile behaviour on a machine with no GPU.
//
//   sandbox_probe parent <scenario> [arg] [--idle S] [--total S] [--output-bytes N] [--low-fds] [--gemm-libraries]
//       runs `sandbox_probe child <scenario> [arg]` through run_isolated, exactly as the grader runs a
//       stage, and prints what the parent saw as one JSON object (survived == true).
//   sandbox_probe child <scenario> [arg] --report-fd N
//       does what the scenario says, as a hostile stage would, between a "start" and a "done" report.
//
// tests/py/submissions/test_gallery_sandbox.py builds it with the host compiler and runs every scenario.
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/isolation.h"

using nlohmann::json;

namespace {

// Tries to create `path`; says what happened.
std::string try_write(const std::string& path) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return std::string("blocked: ") + std::strerror(errno);
    const ssize_t n = write(fd, "pwned\n", 6);
    close(fd);
    return n == 6 ? "WROTE" : "blocked: short write";
}

std::string try_read(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return std::string("blocked: ") + std::strerror(errno);
    char buf[64];
    const ssize_t n = read(fd, buf, sizeof buf);
    close(fd);
    return n >= 0 ? "READ" : std::string("blocked: ") + std::strerror(errno);
}

// Makes a socket of `family` and `type` and connects it to `address`; says what happened ("blocked: ..."
// where the socket was refused, "blocked at connect: ..." where the connection was).
std::string try_socket(int family, int type, const void* address, socklen_t length) {
    const int fd = socket(family, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("blocked: ") + std::strerror(errno);
    std::string said = "MADE";
    if (address) {
        const int rc = connect(fd, static_cast<const sockaddr*>(address), length);
        said = rc == 0 ? "CONNECTED" : errno == EPERM ? std::string("blocked at connect: ") + std::strerror(errno)
                                                      : std::string("MADE (connect: ") + std::strerror(errno) + ")";
    }
    close(fd);
    return said;
}

// Every kind of socket a stage could reach another process with. `listeners`: "<UNIX path>|<abstract
// name>|<TCP port on 127.0.0.1>", each listening in the test.
json try_sockets(const std::string& listeners) {
    const size_t a = listeners.find('|'), b = listeners.find('|', a + 1);
    sockaddr_un path{};
    path.sun_family = AF_UNIX;
    std::strncpy(path.sun_path, listeners.substr(0, a).c_str(), sizeof path.sun_path - 1);
    sockaddr_un abstract{};
    abstract.sun_family = AF_UNIX;
    const std::string name = listeners.substr(a + 1, b - a - 1);
    std::memcpy(abstract.sun_path + 1, name.data(), name.size());  // sun_path[0] == '\0': abstract
    const auto abstract_length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    sockaddr_in tcp{};
    tcp.sin_family = AF_INET;
    tcp.sin_port = htons(static_cast<uint16_t>(std::atoi(listeners.substr(b + 1).c_str())));
    tcp.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    json said;
    said["unix_path"] = try_socket(AF_UNIX, SOCK_STREAM, &path, sizeof path);
    said["unix_abstract"] = try_socket(AF_UNIX, SOCK_STREAM, &abstract, abstract_length);
    // the one kind CUDA makes: the socket is allowed, a connection is not
    said["unix_path_seqpacket"] = try_socket(AF_UNIX, SOCK_SEQPACKET, &path, sizeof path);
    said["unix_abstract_seqpacket"] = try_socket(AF_UNIX, SOCK_SEQPACKET, &abstract, abstract_length);
    said["unix_datagram"] = try_socket(AF_UNIX, SOCK_DGRAM, nullptr, 0);
    said["tcp_localhost"] = try_socket(AF_INET, SOCK_STREAM, &tcp, sizeof tcp);
    said["udp"] = try_socket(AF_INET, SOCK_DGRAM, nullptr, 0);
    said["ipv6"] = try_socket(AF_INET6, SOCK_STREAM, nullptr, 0);
    said["netlink"] = try_socket(AF_NETLINK, SOCK_RAW, nullptr, 0);
    int pair[2];
    said["unix_pair"] = socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0 ? "MADE" : std::string("blocked: ") + std::strerror(errno);
#ifdef SYS_io_uring_setup
    char params[120] = {};  // struct io_uring_params: an io_uring can make and connect sockets of its own
    const long ring = syscall(SYS_io_uring_setup, 4, params);
    said["io_uring"] = ring >= 0 ? "MADE" : std::string("blocked: ") + std::strerror(errno);
#endif
    return said;
}

// What CUDA does in every process (sandbox.cpp): a UNIX seqpacket socket bound to an abstract name and
// listening; and what the sandbox still refuses on it: accepting a connection.
std::string cuda_socket() {
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return std::string("socket: ") + std::strerror(errno);
    sockaddr_un name{};
    name.sun_family = AF_UNIX;
    const std::string id = "gemmlab-probe-cuda-" + std::to_string(getpid());
    std::memcpy(name.sun_path + 1, id.data(), id.size());
    std::string said = "LISTENING";
    if (bind(fd, reinterpret_cast<sockaddr*>(&name), static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + id.size())) != 0)
        said = std::string("bind: ") + std::strerror(errno);
    else if (listen(fd, 1) != 0)
        said = std::string("listen: ") + std::strerror(errno);
    else if (accept4(fd, nullptr, nullptr, SOCK_NONBLOCK) >= 0 || errno != EPERM)
        said = std::string("accept was not refused: ") + std::strerror(errno);
    close(fd);
    return said;
}

// What a forger writes: a passing case and "done".
const char* kForgery =
    "{\"event\":\"case\",\"index\":0,\"result\":{\"disposition\":\"passed\",\"forged\":true}}\n"
    "{\"event\":\"done\",\"forged\":true}\n";

int child(const std::string& scenario, const std::string& arg, int report_fd, int key_fd) {
    const gemmlab::ReportChannel rep(report_fd, key_fd);
    char cwd[4096] = "";
    if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
    rep.send({{"event", "start"}, {"cwd", cwd}, {"home", std::getenv("HOME") ? std::getenv("HOME") : ""},
              {"tmpdir", std::getenv("TMPDIR") ? std::getenv("TMPDIR") : ""}, {"report_fd", report_fd}});
    json probe{{"event", "probe"}};
    if (scenario == "ok") {
        probe["scratch_write"] = try_write("scratch-file");
    } else if (scenario == "fork") {
        const pid_t pid = fork();  // the sandbox ends the process here (SIGSYS)
        if (pid == 0) {
            sleep(3600);
            _exit(0);
        }
        probe["forked"] = pid;
    } else if (scenario == "kill_parent") {
        kill(getppid(), SIGKILL);
        probe["killed_parent"] = true;
    } else if (scenario == "exec_shell") {
        execl("/bin/sh", "sh", "-c", "echo escaped", static_cast<char*>(nullptr));
        probe["exec"] = std::strerror(errno);
    } else if (scenario == "setsid") {
        setsid();
        probe["setsid"] = true;
    } else if (scenario == "abort") {
        std::abort();  // signals itself: allowed, ends by SIGABRT
    } else if (scenario == "threads") {
        int sum = 0;
        std::thread t([&] { sum = 42; });
        t.join();
        probe["thread_sum"] = sum;
    } else if (scenario == "write_fd3") {
        // The careless forgery: fd 3 was the report pipe before the sandbox moved it.
        const ssize_t n = write(3, kForgery, std::strlen(kForgery));
        probe["fd3_write"] = n < 0 ? std::string("blocked: ") + std::strerror(errno) : "WROTE";
        probe["stdout_forgery"] = true;
        std::fputs(kForgery, stdout);
        std::fputs(kForgery, stderr);
        std::fflush(stdout);
    } else if (scenario == "forge_every_pipe") {
        // The determined forgery: every open descriptor that is a pipe gets the lines.
        int pipes = 0;
        for (int fd = 3; fd < 1024; ++fd) {
            struct stat st{};
            if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) continue;
            pipes += write(fd, kForgery, std::strlen(kForgery)) > 0;
        }
        probe["pipes_written"] = pipes;
    } else if (scenario == "write_outside") {
        probe["outside"] = try_write(arg + "/gemmlab-gallery-pwned");
        probe["tmp"] = try_write("/tmp/gemmlab-gallery-pwned-" + std::to_string(getpid()));
        probe["home"] = try_write(std::string(std::getenv("HOME") ? std::getenv("HOME") : ".") + "/home-file");
        probe["cwd"] = try_write("cwd-file");
    } else if (scenario == "read_outside") {  // arg: a directory holding secret.txt
        probe["outside"] = try_read(arg + "/secret.txt");
        probe["etc_passwd"] = try_read("/etc/passwd");  // system files stay readable
    } else if (scenario == "read_library") {  // arg: "lib:" and a library file (cuBLAS: not for a runner of
                                              // submission code); the prefix keeps it from being an argument file
        probe["library"] = try_read(arg.substr(arg.find(':') + 1));
        probe["libc"] = try_read("/proc/self/exe");  // its own executable stays readable
    } else if (scenario == "read_argument") {  // arg: a file named on the command line
        probe["argument"] = try_read(arg);
        probe["argument_path"] = arg;
    } else if (scenario == "sockets") {  // arg: the test's listeners (try_sockets)
        probe["sockets"] = try_sockets(arg);
        probe["cuda_socket"] = cuda_socket();
    } else if (scenario == "sleep") {
        sleep(3600);
    } else if (scenario == "flood") {
        std::string block(1 << 16, 'x');
        block.back() = '\n';
        for (int i = 0; i < 1024; ++i) (void)!write(STDOUT_FILENO, block.data(), block.size());  // 64 MiB
        std::puts("last line of the flood");
    } else if (scenario == "exit") {
        std::exit(0);
    } else {
        probe["error"] = "unknown scenario " + scenario;
    }
    rep.send(probe);
    rep.send({{"event", "done"}});
    return 0;
}

int parent(const std::string& scenario, const std::string& arg, const gemmlab::ChildLimits& limits,
           bool low_fds, const gemmlab::SandboxOptions& sandbox) {
    // The real grader has CUDA's descriptors open by now, so its report pipe is never fd 3 or 4;
    // --low-fds leaves them free (run_isolated must cope with that too).
    if (!low_fds)
        for (int i = 0; i < 4; ++i) open("/dev/null", O_RDONLY);
    std::vector<std::string> args{"child", scenario};
    if (!arg.empty()) args.push_back(arg);
    const gemmlab::ChildOutcome out = gemmlab::run_isolated(gemmlab::self_executable(), args, limits, nullptr, sandbox);
    json j{{"survived", true},
           {"events", out.events},
           {"finished", out.finished},
           {"forged_lines", out.forged_lines},
           {"timed_out", out.timed_out},
           {"exit_code", out.exit_code},
           {"signal", out.signal},
           {"end", gemmlab::describe_end(out)},
           {"output_tail", out.output_tail},
           {"seconds", out.seconds}};
    std::cout << j.dump() << "\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::cerr << "usage: sandbox_probe parent|child <scenario> [arg] [options]\n";
        return 2;
    }
    const std::string role = argv[1], scenario = argv[2];
    std::string arg;
    int report_fd = -1, key_fd = -1;
    bool low_fds = false;
    gemmlab::SandboxOptions sandbox;
    gemmlab::ChildLimits limits;
    limits.idle_seconds = 10;
    limits.total_seconds = 30;
    for (int i = 3; i < argc; ++i) {
        const std::string a = argv[i];
        const bool has_value = i + 1 < argc;
        if (a == "--report-fd" && has_value) report_fd = std::atoi(argv[++i]);
        else if (a == "--report-key-fd" && has_value) key_fd = std::atoi(argv[++i]);
        else if (a == "--idle" && has_value) limits.idle_seconds = std::atof(argv[++i]);
        else if (a == "--total" && has_value) limits.total_seconds = std::atof(argv[++i]);
        else if (a == "--low-fds") low_fds = true;
        else if (a == "--gemm-libraries") sandbox.gemm_libraries = true;
        else if (a == "--output-bytes" && has_value) limits.output_bytes = std::strtoull(argv[++i], nullptr, 10);
        else arg = a;
    }
    if (role == "child") return child(scenario, arg, report_fd, key_fd);
    return parent(scenario, arg, limits, low_fds, sandbox);
}
