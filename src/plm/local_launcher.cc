#include "plm/local_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "os/child_process.h"
#include "plm/bootstrap.h"

namespace grove {

namespace {
constexpr int kBootstrapFd = 3;
}

std::string find_groved() {
  if (const char* env = std::getenv("GROVE_GROVED"); env != nullptr && *env != '\0') return env;
  std::error_code error;
  auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    auto sibling = self.parent_path() / "groved";
    if (std::filesystem::exists(sibling)) return sibling.string();
    auto build_tree = self.parent_path().parent_path() / "src" / "groved";
    if (std::filesystem::exists(build_tree)) return build_tree.string();
  }
  return "groved";
}

Result<int> launch_local_daemon(const LaunchRequest& request) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  std::vector<std::string> args = {request.groved_path,
                                   "--vpid",
                                   std::to_string(request.vpid),
                                   "--dvm-size",
                                   std::to_string(request.dvm_size),
                                   "--controller",
                                   request.controller_endpoint,
                                   "--bootstrap-fd",
                                   std::to_string(kBootstrapFd),
                                   "--session-dir",
                                   request.session_dir};
  if (!request.topology_xml.empty()) {
    args.push_back("--topology-xml");
    args.push_back(request.topology_xml);
  }
  if (request.cpu_slot) {
    args.push_back("--cpu-slot");
    args.push_back(std::to_string(*request.cpu_slot));
  }
  if (request.joining) args.push_back("--join");
  args.insert(args.end(), request.param_arguments.begin(), request.param_arguments.end());
  ChildSpec child;
  // vfork: the controller's page tables are not copied for a child that
  // only execs (a fork of it cost milliseconds per daemon on a VM).
  child.mechanism = StartMechanism::vfork;
  child.argv = args;
  child.fds = {ChildFd::copy(kBootstrapFd, pipe_fds[0])};
  child.signals = SignalReset::caught;
  child.default_signals = {SIGPIPE};
  child.mask = SignalMask::inherit;
  child.parent_death_signal = SIGTERM;
  // groved raises its own and must know the one its ranks are to get.
  child.restore_open_files = true;
  child.restore_cpus = true;  // each daemon picks its own CPU from the whole set
  child.exec_failure = ExecFailure::child_exits;
  child.exec_failure_message = "groved: cannot execute the daemon binary";
  auto started = start_child(child);
  if (!started) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return started.error();
  }
  const pid_t pid = started->pid;
  close(pipe_fds[0]);
  auto status = write_bootstrap(pipe_fds[1], Bootstrap{request.secret, std::nullopt, {}});
  close(pipe_fds[1]);
  if (!status) {
    kill(pid, SIGKILL);
    return Error{"handing the secret to daemon " + std::to_string(request.vpid) + ": " +
                 status.error().message};
  }
  return static_cast<int>(pid);
}

}  // namespace grove
