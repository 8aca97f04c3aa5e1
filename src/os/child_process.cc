#include "os/child_process.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "os/cpu_binding.h"
#include "os/process_limits.h"

extern char** environ;

namespace grove {
namespace {

// The step of the child's set-up that failed, told to the parent.
enum class Step : int { none = 0, exec, dup2, dev_null, chdir, cpus };

struct Failure {
  Step step = Step::none;
  int error = 0;
};

struct FdMove {
  int source;
  int target;
};
struct FdNull {
  int target;
  int flags;
};

// Everything the child reads, built before it exists: after fork it only
// reads this and makes system calls.
struct Prepared {
  const char* program = nullptr;
  std::vector<char*> argv;
  std::vector<char*> envp;  // empty: this process's environment
  std::vector<FdMove> moves;
  std::vector<FdNull> nulls;
  std::vector<int> moved;  // our copies of sources, closed once the child has started
  int floor = 0;           // above every target: where sources and the report pipe go
  long open_max = 1024;    // for closing one by one when close_range is refused
  cpu_set_t cpus;
  bool set_cpus = false;
  std::string failure_line;  // ExecFailure::child_exits

  Prepared() = default;
  Prepared(const Prepared&) = delete;
  Prepared& operator=(const Prepared&) = delete;
  ~Prepared() {
    for (int fd : moved)
      close(fd);
  }
};

// `fd`, or a close-on-exec copy of it at or above `floor` (ours to close).
// A source below the floor could be overwritten by another target's dup2.
Result<int> above(int fd, int floor, std::vector<int>& owned) {
  if (fd >= floor) return fd;
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, floor);
  if (copy < 0) return Error{std::string("fcntl: ") + std::strerror(errno)};
  owned.push_back(copy);
  return copy;
}

std::vector<char*> pointers(std::span<const std::string> strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& each : strings)
    out.push_back(const_cast<char*>(each.c_str()));  // exec and posix_spawn only read them
  out.push_back(nullptr);
  return out;
}

Status prepare(const ChildSpec& spec, bool execs, Prepared& p) {
  if (execs && spec.argv.empty()) return Error{"no program to start"};
  if (execs) p.argv = pointers(spec.argv);
  if (execs) p.program = spec.program.empty() ? p.argv[0] : spec.program.c_str();
  if (spec.env) p.envp = pointers(*spec.env);
  for (const ChildFd& fd : spec.fds)
    p.floor = std::max(p.floor, fd.target + 1);
  if (spec.close_from >= 0 && spec.close_from < p.floor)
    return Error{"close_from " + std::to_string(spec.close_from) +
                 " would close a planned descriptor"};
  for (const ChildFd& fd : spec.fds) {
    if (fd.null_flags != -1) {
      p.nulls.push_back({fd.target, fd.null_flags});
      continue;
    }
    auto source = above(fd.source, p.floor, p.moved);
    if (!source) return source.error();
    p.moves.push_back({*source, fd.target});
  }
  if (spec.cpus && spec.mechanism != StartMechanism::spawn) {
    CPU_ZERO(&p.cpus);
    for (int cpu : *spec.cpus) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &p.cpus);
    }
    p.set_cpus = true;
  }
  if (spec.close_from >= 0 && spec.mechanism != StartMechanism::spawn) {
    if (const long most = sysconf(_SC_OPEN_MAX); most > 0) p.open_max = most;
  }
  if (spec.exec_failure == ExecFailure::child_exits)
    p.failure_line = spec.exec_failure_message + "\n";
  return ok_status();
}

std::string describe(const ChildSpec& spec, Failure failure) {
  const std::string program = !spec.program.empty() ? spec.program
                              : spec.argv.empty()   ? "a forked child"
                                                    : spec.argv[0];
  const std::string reason = std::strerror(failure.error);
  switch (failure.step) {
    case Step::dup2:
      return "cannot start " + program + ": dup2: " + reason;
    case Step::dev_null:
      return "cannot start " + program + ": /dev/null: " + reason;
    case Step::chdir:
      return "cannot start " + program + ": chdir " + spec.cwd + ": " + reason;
    case Step::cpus:
      return "cannot start " + program + ": sched_setaffinity: " + reason;
    case Step::exec:
    case Step::none:
      break;
  }
  return "cannot start " + program + ": " + reason;
}

// ---- In the child, between fork and exec: async-signal-safe calls only. ----

// Where the child tells the parent why it failed: a pipe (fork), the
// parent's memory it still shares (vfork), or its own stderr (child_exits).
struct Reporter {
  int fd = -1;
  volatile Failure* shared = nullptr;
  const std::string* line = nullptr;
};

[[noreturn]] void fail_in_child(const Reporter& reporter, Failure failure) {
  if (reporter.line != nullptr) {
    ssize_t ignored = write(STDERR_FILENO, reporter.line->data(), reporter.line->size());
    (void)ignored;
  } else if (reporter.shared != nullptr) {
    reporter.shared->error = failure.error;
    reporter.shared->step = failure.step;
  } else if (reporter.fd >= 0) {
    ssize_t ignored = write(reporter.fd, &failure, sizeof failure);
    (void)ignored;
  }
  _exit(127);
}

void set_disposition(int signal, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
}

void reset_signals(const ChildSpec& spec) {
  if (spec.signals != SignalReset::none) {
    for (int signal = 1; signal < NSIG; ++signal) {
      if (spec.signals == SignalReset::caught) {
        struct sigaction action {};
        if (sigaction(signal, nullptr, &action) != 0) continue;
        if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
      }
      set_disposition(signal, SIG_DFL);  // SIGKILL and SIGSTOP refuse: harmless
    }
  }
  for (int signal : spec.ignore_signals)
    set_disposition(signal, SIG_IGN);
  for (int signal : spec.default_signals)
    set_disposition(signal, SIG_DFL);
}

void close_range_or_loop(int from, int to, long open_max) {
  if (from > to) return;
  if (syscall(SYS_close_range, static_cast<unsigned>(from), static_cast<unsigned>(to), 0U) == 0)
    return;
  // Kernels before 5.9 (or a seccomp filter) refuse it: one by one.
  const long last = std::min<long>(to, open_max - 1);
  for (long fd = from; fd <= last; ++fd)
    close(static_cast<int>(fd));
}

Failure apply_fds(const ChildSpec& spec, const Prepared& p, int keep) {
  for (const FdMove& move : p.moves) {
    if (dup2(move.source, move.target) < 0) return {Step::dup2, errno};  // clears close-on-exec
  }
  for (const FdNull& null : p.nulls) {
    const int fd = open("/dev/null", null.flags);
    if (fd < 0) return {Step::dev_null, errno};
    if (fd != null.target) {
      if (dup2(fd, null.target) < 0) return {Step::dup2, errno};
      close(fd);
    }
  }
  for (int fd : p.moved)  // close-on-exec, but a body runs without exec
    close(fd);
  for (int fd : spec.close_fds)
    close(fd);
  if (spec.close_from >= 0) {
    // Everything from close_from up but the report pipe, which exec closes.
    if (keep >= spec.close_from) {
      close_range_or_loop(spec.close_from, keep - 1, p.open_max);
      close_range_or_loop(keep + 1, INT_MAX, p.open_max);
    } else {
      close_range_or_loop(spec.close_from, INT_MAX, p.open_max);
    }
  }
  return {};
}

// Everything but exec (or the body). `parent` is our pid before the fork.
Failure set_up_child(const ChildSpec& spec, const Prepared& p, int report_fd, pid_t parent,
                     const sigset_t& caller_mask) {
  reset_signals(spec);
  if (spec.parent_death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
    if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
  }
  if (spec.group == ProcessGroup::own_session) setsid();
  if (spec.group == ProcessGroup::own_group) setpgid(0, 0);
  if (Failure failed = apply_fds(spec, p, report_fd); failed.step != Step::none) return failed;
  if (spec.restore_open_files) restore_open_file_limit();
  if (p.set_cpus) {
    if (sched_setaffinity(0, sizeof p.cpus, &p.cpus) != 0) return {Step::cpus, errno};
  } else if (spec.restore_cpus) {
    restore_cpu_affinity();
  }
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) return {Step::chdir, errno};
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, spec.mask == SignalMask::empty ? &none : &caller_mask, nullptr);
  return {};
}

[[noreturn]] void exec_child(const ChildSpec& spec, const Prepared& p, const Reporter& reporter) {
  char* const* argv = p.argv.data();
  char* const* envp = p.envp.empty() ? environ : p.envp.data();
  if (spec.search_path) {
    execvpe(p.program, argv, envp);
  } else {
    execve(p.program, argv, envp);
  }
  fail_in_child(reporter, {Step::exec, errno});
}

// ---- In the parent. ----

struct ReportPipe {
  int read = -1;
  int write = -1;
  ~ReportPipe() {
    if (read >= 0) close(read);
    if (write >= 0) close(write);
  }
};

// The write end lands above every target, so no dup2 of the plan overwrites it.
Status open_report_pipe(ReportPipe& pipe, int floor) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  pipe.read = fds[0];
  pipe.write = fds[1];
  if (pipe.write < floor) {
    const int moved = fcntl(pipe.write, F_DUPFD_CLOEXEC, floor);
    if (moved < 0) return Error{std::string("fcntl: ") + std::strerror(errno)};
    close(pipe.write);
    pipe.write = moved;
  }
  return ok_status();
}

// What the child wrote before exec (or its body): nothing if all went well.
Failure read_report(int fd) {
  Failure failure;
  ssize_t got;
  do {
    got = read(fd, &failure, sizeof failure);
  } while (got < 0 && errno == EINTR);
  return got == static_cast<ssize_t>(sizeof failure) ? failure : Failure{};
}

Result<StartedChild> start_forked(const ChildSpec& spec, const Prepared& p,
                                  const std::function<int()>* body) {
  const bool vfork_it = spec.mechanism == StartMechanism::vfork;
  const bool reports = spec.exec_failure == ExecFailure::report || body != nullptr;
  ReportPipe pipe;
  if (reports && !vfork_it) {
    if (auto opened = open_report_pipe(pipe, p.floor); !opened) return opened.error();
  }
  volatile Failure shared;
  Reporter reporter;
  if (spec.exec_failure == ExecFailure::child_exits && body == nullptr) {
    reporter.line = &p.failure_line;
  } else if (vfork_it) {
    reporter.shared = &shared;
  } else {
    reporter.fd = pipe.write;
  }
  const pid_t parent = getpid();
  // Signals stay blocked across fork until the child has reset their
  // handlers: none of ours may run in it (with vfork, on our memory).
  sigset_t all, caller_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &caller_mask);
  const pid_t pid = vfork_it ? vfork() : fork();
  if (pid == 0) {
    if (pipe.read >= 0) close(pipe.read);
    if (Failure failed = set_up_child(spec, p, pipe.write, parent, caller_mask);
        failed.step != Step::none)
      fail_in_child(reporter, failed);
    if (body == nullptr) exec_child(spec, p, reporter);
    close(pipe.write);  // set up: the parent goes on
    _exit((*body)());
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
  if (pid < 0) return Error{std::string("fork: ") + std::strerror(fork_errno)};
  Failure failure{shared.step, shared.error};
  if (pipe.write >= 0) {
    close(pipe.write);
    pipe.write = -1;
    failure = read_report(pipe.read);
  }
  if (reports && failure.step != Step::none) {
    waitpid(pid, nullptr, 0);  // it has exited 127: nobody else waits for it
    return Error{describe(spec, failure)};
  }
  return StartedChild{pid, 0};
}

Status refuse_for_spawn(const ChildSpec& spec) {
  const char* what = spec.parent_death_signal != 0              ? "a parent-death signal"
                     : !spec.ignore_signals.empty()             ? "ignored signals"
                     : spec.exec_failure != ExecFailure::report ? "a failure message"
                                                                : nullptr;
  if (what == nullptr) return ok_status();
  return Error{std::string("posix_spawn cannot give a child ") + what};
}

void spawn_attributes(const ChildSpec& spec, posix_spawnattr_t& attributes) {
  short flags = 0;
  sigset_t defaults, none;
  sigemptyset(&none);
  if (spec.signals == SignalReset::all) {
    sigfillset(&defaults);
  } else {
    sigemptyset(&defaults);  // exec resets caught ones itself
  }
  for (int signal : spec.default_signals)
    sigaddset(&defaults, signal);
  if (spec.signals == SignalReset::all || !spec.default_signals.empty()) {
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    flags |= POSIX_SPAWN_SETSIGDEF;
  }
  if (spec.mask == SignalMask::empty) {
    posix_spawnattr_setsigmask(&attributes, &none);
    flags |= POSIX_SPAWN_SETSIGMASK;
  }
  if (spec.group == ProcessGroup::own_group) {
    posix_spawnattr_setpgroup(&attributes, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  } else if (spec.group == ProcessGroup::own_session) {
    flags |= POSIX_SPAWN_SETSID;
  }
  posix_spawnattr_setflags(&attributes, flags);
}

void spawn_file_actions(const ChildSpec& spec, const Prepared& p,
                        posix_spawn_file_actions_t& actions) {
  for (const FdMove& move : p.moves)
    posix_spawn_file_actions_adddup2(&actions, move.source, move.target);
  for (const FdNull& null : p.nulls)
    posix_spawn_file_actions_addopen(&actions, null.target, "/dev/null", null.flags, 0);
  for (int fd : spec.close_fds)
    posix_spawn_file_actions_addclose(&actions, fd);
  if (spec.close_from >= 0) posix_spawn_file_actions_addclosefrom_np(&actions, spec.close_from);
  if (!spec.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, spec.cwd.c_str());
}

// Limits and CPUs from the parent: posix_spawn has no step for them.
int after_spawn(const ChildSpec& spec, pid_t pid) {
  if (spec.restore_open_files) (void)restore_open_file_limit_of(pid);
  if (spec.cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : *spec.cpus) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    }
    return sched_setaffinity(pid, sizeof set, &set) != 0 ? errno : 0;
  }
  if (spec.restore_cpus) (void)restore_cpu_affinity_of(pid);
  return 0;
}

Result<StartedChild> start_spawned(const ChildSpec& spec, const Prepared& p) {
  if (auto refused = refuse_for_spawn(spec); !refused) return refused.error();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  spawn_file_actions(spec, p, actions);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  spawn_attributes(spec, attributes);
  char* const* envp = p.envp.empty() ? environ : p.envp.data();
  pid_t pid = -1;
  const int failed = spec.search_path
                         ? posix_spawnp(&pid, p.program, &actions, &attributes, p.argv.data(), envp)
                         : posix_spawn(&pid, p.program, &actions, &attributes, p.argv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) return Error{describe(spec, {Step::exec, failed})};
  return StartedChild{pid, after_spawn(spec, pid)};
}

}  // namespace

Result<StartedChild> start_child(const ChildSpec& spec) {
  Prepared prepared;
  if (auto ready = prepare(spec, true, prepared); !ready) return ready.error();
  if (spec.mechanism == StartMechanism::spawn) return start_spawned(spec, prepared);
  return start_forked(spec, prepared, nullptr);
}

Result<pid_t> fork_child(const ChildSpec& spec, const std::function<int()>& body) {
  if (spec.mechanism != StartMechanism::fork) return Error{"a child that runs a body is forked"};
  Prepared prepared;
  if (auto ready = prepare(spec, false, prepared); !ready) return ready.error();
  auto started = start_forked(spec, prepared, &body);
  if (!started) return started.error();
  return started->pid;
}

std::string reexec_self(const std::vector<std::string>& argv) {
  std::vector<char*> pointers;
  for (const std::string& arg : argv)
    pointers.push_back(const_cast<char*>(arg.c_str()));
  pointers.push_back(nullptr);
  ::execv("/proc/self/exe", pointers.data());
  return std::string("exec failed: ") + std::strerror(errno);
}

int wait_exit_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::optional<std::string> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/bin:/bin";
  while (true) {
    const std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

}  // namespace grove
