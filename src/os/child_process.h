// Every process grove starts, described once and started by one function:
// the daemons on this host (vfork), ssh and srun (fork, on pipes), a rank's
// grove-exec (posix_spawn), a background DVM's controller and its log tee
// (fork, no exec). The description is built before the child exists; in the
// child, between fork and exec, only async-signal-safe calls run (no
// allocation), so a multi-threaded parent (libpmix, libevent) is safe.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

// How the child is made. fork copies the parent's page tables (a daemon of
// many ranks pays for every page it writes later); vfork and posix_spawn
// borrow its memory until exec, which is what a launch of thousands needs.
enum class StartMechanism : std::uint8_t {
  fork,
  vfork,  // the parent waits until the child execs or exits
  spawn,  // posix_spawn: what it cannot do (a parent-death signal, a body,
          // writing a message on failure) start_child refuses
};

enum class ProcessGroup : std::uint8_t {
  inherit,
  own_group,    // setpgid(0, 0): signals to the group reach only it and its own
  own_session,  // setsid: no controlling terminal either
};

// What the child's signal dispositions are reset to before exec (or before
// a body runs). exec itself resets caught ones; doing it first means no
// handler of the parent's runs in a child that shares its memory.
enum class SignalReset : std::uint8_t {
  none,    // as the parent's (a forked child that runs grove's own code)
  caught,  // caught ones to the default, ignored ones stay ignored
  all,     // every one to the default, ignored ones too
};

enum class SignalMask : std::uint8_t {
  empty,
  inherit,  // the starting thread's mask when start_child was called
};

// A failure to exec (or to set the child up) is told to the parent, or
// shown by the child itself.
enum class ExecFailure : std::uint8_t {
  report,       // start_child returns an Error and has reaped the child
  child_exits,  // the child writes exec_failure_message to its fd 2 and
                // exits 127; start_child returns its pid
};

// One descriptor of the child: a copy of one of ours, or /dev/null.
struct ChildFd {
  int target = -1;
  int source = -1;      // ours; left open in the parent
  int null_flags = -1;  // not -1: /dev/null opened with these flags instead

  static ChildFd copy(int target, int source) { return {target, source, -1}; }
  static ChildFd dev_null(int target, int flags) { return {target, -1, flags}; }
};

// A child to start. argv and env are views: what they refer to must live
// until start_child returns (it copies nothing it can point to).
struct ChildSpec {
  StartMechanism mechanism = StartMechanism::fork;
  std::span<const std::string> argv;
  std::string program;      // the file to run; empty: argv[0]
  bool search_path = true;  // a program without a slash is looked up on PATH
  // "NAME=value", the whole environment; nothing: this process's.
  std::optional<std::span<const std::string>> env;
  std::string cwd;  // empty: ours

  // The fd plan. Each target gets its source (sources are moved out of the
  // way of every target first, so any order is safe); then close_fds are
  // closed, then every descriptor from close_from up (-1: none; the rest are
  // closed by exec only if close-on-exec). close_from is above every target.
  std::vector<ChildFd> fds;
  std::vector<int> close_fds;
  int close_from = -1;

  ProcessGroup group = ProcessGroup::inherit;
  SignalReset signals = SignalReset::all;
  std::vector<int> ignore_signals;   // then set to SIG_IGN
  std::vector<int> default_signals;  // then set to SIG_DFL
  SignalMask mask = SignalMask::empty;
  int parent_death_signal = 0;  // PR_SET_PDEATHSIG; the child exits 1 if we are already gone

  // os/process_limits.h: the open-file limit this process had before it
  // raised its own.
  bool restore_open_files = false;
  // os/cpu_binding.h: the CPUs this process had before it bound itself;
  // `cpus`, if set, instead. With spawn both are set from the parent just
  // after the start (its program must wait for a go to never run unbound).
  bool restore_cpus = false;
  std::optional<std::span<const int>> cpus;  // a view, as argv

  ExecFailure exec_failure = ExecFailure::report;
  std::string exec_failure_message;  // child_exits: a newline is added
};

struct StartedChild {
  pid_t pid = -1;
  // spawn only: setting `cpus` failed with this errno (the child runs on).
  // fork and vfork report it as a failure to start instead.
  int bind_error = 0;
};

// Starts the child and returns its pid, or why it did not start:
// "fork: REASON", "cannot start PROGRAM: REASON" (its exec failed: the
// errno of exec, or of posix_spawn), "cannot start PROGRAM: STEP: REASON"
// (setting it up failed), "fcntl: REASON" (moving a source).
Result<StartedChild> start_child(const ChildSpec& spec);

// Forks a child that sets itself up as `spec` says (argv, env and
// exec_failure unused; mechanism must be fork) and then runs `body` in this
// program's own code and exits with what it returns. Returns once the child
// is set up.
Result<pid_t> fork_child(const ChildSpec& spec, const std::function<int()>& body);

// Replaces this process with this program (/proc/self/exe) run as `argv`,
// in the environment as it is now (a re-exec with a tunable set); returns
// only if that failed, with why.
std::string reexec_self(const std::vector<std::string>& argv);

// Waits for the child `pid` (through EINTR): its exit status, or -1 if a
// signal ended it or it was not ours.
int wait_exit_status(pid_t pid);

// The executable `name` would run as on PATH, or nothing.
std::optional<std::string> find_on_path(const std::string& name);

}  // namespace grove
