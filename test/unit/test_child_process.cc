// os/child_process.h with real children (/bin/sh, /bin/true): the fd plan,
// the environment and directory, process groups, signal resets, and exec
// failures told to the parent, under each of fork, vfork and posix_spawn.
// Every child is reaped here, and killed by pid if it outstays its welcome.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "os/child_process.h"
#include "support/wait.h"

using namespace grove;
using namespace std::chrono_literals;

namespace {

struct Pipe {
  int read = -1;
  int write = -1;
  Pipe() {
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    read = fds[0];
    write = fds[1];
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  void close_read() {
    if (read >= 0) close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) close(write);
    write = -1;
  }
};

// Everything written to `fd` until end-of-file (or 10 s).
std::string read_all(int fd) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd ready{fd, POLLIN, 0};
    if (poll(&ready, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

// The child's wait status; killed (by its pid) if it has not ended in 10 s.
int reap(pid_t pid) {
  int status = 0;
  const bool ended = test::wait_until([&] { return waitpid(pid, &status, WNOHANG) == pid; }, 10s);
  if (!ended) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  REQUIRE(ended);
  return status;
}

// /bin/sh -c SCRIPT with stdout on `out`, stderr kept.
ChildSpec shell(const std::vector<std::string>& argv, int out, StartMechanism mechanism) {
  ChildSpec child;
  child.mechanism = mechanism;
  child.argv = argv;
  child.fds = {ChildFd::dev_null(STDIN_FILENO, O_RDONLY), ChildFd::copy(STDOUT_FILENO, out),
               ChildFd::copy(STDERR_FILENO, STDERR_FILENO)};
  child.close_from = 3;
  return child;
}

// Runs `spec` to its end; returns what it wrote on `out`.
std::string run(const ChildSpec& spec, Pipe& out) {
  auto started = start_child(spec);
  REQUIRE(started);
  out.close_write();
  const std::string text = read_all(out.read);
  const int status = reap(started->pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  return text;
}

bool is_open(int fd) {
  return fcntl(fd, F_GETFD) != -1;
}

const StartMechanism kEvery[] = {StartMechanism::fork, StartMechanism::vfork,
                                 StartMechanism::spawn};

}  // namespace

TEST_CASE("a child sees the planned descriptors and no other", "[child_process]") {
  for (StartMechanism mechanism : kEvery) {
    CAPTURE(static_cast<int>(mechanism));
    Pipe out, input, swapped_a, swapped_b;
    // Two sources whose numbers are each other's targets, and a stray
    // descriptor without close-on-exec that close_from must close.
    const int a = 40, b = 41, stray = 45;
    REQUIRE(!is_open(a));
    REQUIRE(!is_open(b));
    REQUIRE(!is_open(stray));
    REQUIRE(dup2(swapped_a.write, a) == a);
    REQUIRE(dup2(swapped_b.write, b) == b);
    REQUIRE(dup2(out.write, stray) == stray);
    REQUIRE(write(input.write, "hello\n", 6) == 6);
    input.close_write();
    const std::vector<std::string> argv = {
        "/bin/bash", "-c",  // dash redirects only descriptors 0 to 9
        "read line; echo \"$line\"; echo into-40 >&40; echo into-41 >&41;"
        " [ -e /proc/self/fd/45 ] && echo stray-open; echo done"};
    ChildSpec spec = shell(argv, out.write, mechanism);
    spec.fds[0] = ChildFd::copy(STDIN_FILENO, input.read);
    spec.fds.push_back(ChildFd::copy(a, b));  // the child's 40 is our 41, and back
    spec.fds.push_back(ChildFd::copy(b, a));
    spec.close_from = 42;
    auto started = start_child(spec);
    close(a);
    close(b);
    close(stray);
    REQUIRE(started);
    out.close_write();
    swapped_a.close_write();
    swapped_b.close_write();
    CHECK(read_all(out.read) == "hello\ndone\n");
    CHECK(read_all(swapped_a.read) == "into-41\n");  // ours at 40 was its 41
    CHECK(read_all(swapped_b.read) == "into-40\n");
    CHECK(WEXITSTATUS(reap(started->pid)) == 0);
  }
}

TEST_CASE("a child gets the environment and directory it is given", "[child_process]") {
  REQUIRE(setenv("GROVE_TEST_INHERITED", "from-parent", 1) == 0);
  const std::vector<std::string> argv = {"/bin/sh", "-c",
                                         "echo \"$GROVE_TEST_GIVEN:$GROVE_TEST_INHERITED\"; pwd"};
  const std::vector<std::string> env = {"GROVE_TEST_GIVEN=given", "PATH=/usr/bin:/bin"};
  for (StartMechanism mechanism : kEvery) {
    CAPTURE(static_cast<int>(mechanism));
    {
      Pipe out;
      ChildSpec spec = shell(argv, out.write, mechanism);
      spec.env = std::span<const std::string>(env);
      spec.cwd = "/";
      CHECK(run(spec, out) == "given:\n/\n");
    }
    {
      Pipe out;  // nothing given: ours
      char here[4096];
      REQUIRE(getcwd(here, sizeof here) != nullptr);
      CHECK(run(shell(argv, out.write, mechanism), out) ==
            ":from-parent\n" + std::string(here) + "\n");
    }
  }
  unsetenv("GROVE_TEST_INHERITED");
}

TEST_CASE("a child's program may differ from its argv[0]", "[child_process]") {
  const std::vector<std::string> argv = {"named-so", "-c", "echo \"$0\""};
  for (StartMechanism mechanism : kEvery) {
    CAPTURE(static_cast<int>(mechanism));
    Pipe out;
    ChildSpec spec = shell(argv, out.write, mechanism);
    spec.program = "/bin/sh";
    CHECK(run(spec, out) == "named-so\n");
  }
}

TEST_CASE("an exec that fails is told to the parent, or shown by the child", "[child_process]") {
  const std::vector<std::string> missing = {"/no/such/program", "arg"};
  for (StartMechanism mechanism : kEvery) {
    CAPTURE(static_cast<int>(mechanism));
    ChildSpec spec;
    spec.mechanism = mechanism;
    spec.argv = missing;
    auto started = start_child(spec);
    REQUIRE_FALSE(started);
    CHECK(started.error().message == "cannot start /no/such/program: No such file or directory");
  }
  for (StartMechanism mechanism : {StartMechanism::fork, StartMechanism::vfork}) {
    CAPTURE(static_cast<int>(mechanism));
    Pipe err;
    ChildSpec spec;
    spec.mechanism = mechanism;
    spec.argv = missing;
    spec.fds = {ChildFd::copy(STDERR_FILENO, err.write)};
    spec.exec_failure = ExecFailure::child_exits;
    spec.exec_failure_message = "grove: cannot execute the test's program";
    auto started = start_child(spec);
    REQUIRE(started);
    err.close_write();
    CHECK(read_all(err.read) == "grove: cannot execute the test's program\n");
    const int status = reap(started->pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 127);
  }
  // A set-up step that fails is told as well, naming the step.
  const std::vector<std::string> truth = {"/bin/true"};
  ChildSpec spec;
  spec.argv = truth;
  spec.cwd = "/no/such/directory";
  auto started = start_child(spec);
  REQUIRE_FALSE(started);
  CHECK(started.error().message ==
        "cannot start /bin/true: chdir /no/such/directory: No such file or directory");
  // posix_spawn cannot give what only a forked child can.
  spec.cwd.clear();
  spec.mechanism = StartMechanism::spawn;
  spec.parent_death_signal = SIGTERM;
  CHECK_FALSE(start_child(spec));
}

TEST_CASE("a child gets a process group or session of its own", "[child_process]") {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "read line; exit 0"};
  for (StartMechanism mechanism : kEvery) {
    for (ProcessGroup group : {ProcessGroup::own_group, ProcessGroup::own_session}) {
      CAPTURE(static_cast<int>(mechanism), static_cast<int>(group));
      Pipe input;
      ChildSpec spec;
      spec.mechanism = mechanism;
      spec.argv = argv;
      spec.group = group;
      spec.fds = {ChildFd::copy(STDIN_FILENO, input.read)};
      auto started = start_child(spec);
      REQUIRE(started);
      const pid_t pid = started->pid;
      // fork and vfork return once it has exec'd; posix_spawn sets the
      // group before exec as well.
      CHECK(getpgid(pid) == pid);
      if (group == ProcessGroup::own_session) {
        CHECK(getsid(pid) == pid);
      } else {
        CHECK(getsid(pid) == getsid(0));
      }
      input.close_write();  // its read ends
      CHECK(WEXITSTATUS(reap(pid)) == 0);
    }
  }
}

namespace {

// Whether `signal`'s bit is set in the /proc/PID/status line `field`
// ("SigIgn", "SigBlk") as the child printed it.
bool has_bit(const std::string& status, const std::string& field, int signal) {
  const auto at = status.find(field + ":");
  REQUIRE(at != std::string::npos);
  const unsigned long long mask =
      std::strtoull(status.c_str() + at + field.size() + 1, nullptr, 16);
  return ((mask >> (signal - 1)) & 1ULL) != 0;
}

}  // namespace

TEST_CASE("a child's signal dispositions and mask are reset as asked", "[child_process]") {
  // Ours: SIGUSR1 ignored, SIGUSR2 blocked; the child reports its own.
  struct sigaction ignore {
  }, before_usr1{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  REQUIRE(sigaction(SIGUSR1, &ignore, &before_usr1) == 0);
  sigset_t usr2, before_mask;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  REQUIRE(pthread_sigmask(SIG_BLOCK, &usr2, &before_mask) == 0);
  // grep itself, no shell: a shell waiting in sigsuspend shows that mask.
  const std::vector<std::string> argv = {"grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status"};
  for (StartMechanism mechanism : kEvery) {
    CAPTURE(static_cast<int>(mechanism));
    {
      Pipe out;
      ChildSpec spec = shell(argv, out.write, mechanism);
      spec.signals = SignalReset::all;
      spec.mask = SignalMask::empty;
      const std::string status = run(spec, out);
      CAPTURE(status);
      CHECK_FALSE(has_bit(status, "SigIgn", SIGUSR1));
      CHECK_FALSE(has_bit(status, "SigBlk", SIGUSR2));
    }
    if (mechanism != StartMechanism::spawn) {  // posix_spawn keeps ignored ones unless told
      Pipe out;
      ChildSpec spec = shell(argv, out.write, mechanism);
      spec.signals = SignalReset::caught;
      spec.mask = SignalMask::inherit;
      spec.ignore_signals = {SIGHUP};
      const std::string status = run(spec, out);
      CAPTURE(status);
      CHECK(has_bit(status, "SigIgn", SIGUSR1));
      CHECK(has_bit(status, "SigIgn", SIGHUP));
      CHECK(has_bit(status, "SigBlk", SIGUSR2));
    }
  }
  REQUIRE(pthread_sigmask(SIG_SETMASK, &before_mask, nullptr) == 0);
  REQUIRE(sigaction(SIGUSR1, &before_usr1, nullptr) == 0);
}

TEST_CASE("a forked child runs a body with the fd plan applied", "[child_process]") {
  Pipe out;
  const int stray = 43;
  REQUIRE(!is_open(stray));
  REQUIRE(dup2(out.write, stray) == stray);
  ChildSpec spec;
  spec.fds = {ChildFd::copy(STDOUT_FILENO, out.write)};
  spec.close_from = 3;
  spec.group = ProcessGroup::own_group;
  auto pid = fork_child(spec, [&]() -> int {
    const char* answer = is_open(stray) ? "stray\n" : "alone\n";
    if (write(STDOUT_FILENO, answer, std::strlen(answer)) < 0) return 1;
    return getpgrp() == getpid() ? 3 : 4;
  });
  close(stray);
  REQUIRE(pid);
  out.close_write();
  CHECK(read_all(out.read) == "alone\n");
  const int status = reap(*pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 3);
  spec.mechanism = StartMechanism::vfork;  // a body needs a copy of us
  CHECK_FALSE(fork_child(spec, [] { return 0; }));
}
