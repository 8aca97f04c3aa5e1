#include "plm/local_launcher.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "os/cpu_binding.h"
#include "os/process_limits.h"
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
  args.insert(args.end(), request.param_arguments.begin(), request.param_arguments.end());
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  // vfork: the controller's page tables are not copied for a child that
  // only execs (a fork of it cost milliseconds per daemon on a VM). The
  // child borrows this process's memory until exec, so it makes only system
  // calls, and no handler of the controller's may run in it: signals stay
  // blocked until the child has put every caught one back to its default.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = vfork();
  if (pid != 0) pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Error{std::string("fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    // Only system calls from here to exec.
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action {};
      if (sigaction(sig, nullptr, &action) != 0) continue;
      if (action.sa_handler == SIG_DFL || action.sa_handler == SIG_IGN) continue;
      action.sa_handler = SIG_DFL;
      action.sa_flags = 0;
      sigaction(sig, &action, nullptr);
    }
    sigprocmask(SIG_SETMASK, &before, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the controller died before prctl took effect
    signal(SIGPIPE, SIG_DFL);
    // groved raises its own and must know the one its ranks are to get.
    restore_open_file_limit();
    restore_cpu_affinity();  // each daemon picks its own CPU from the whole set
    if (pipe_fds[0] == kBootstrapFd) {
      fcntl(kBootstrapFd, F_SETFD, 0);
    } else {
      dup2(pipe_fds[0], kBootstrapFd);  // dup2 clears close-on-exec on the copy
    }
    execvp(argv[0], argv.data());
    const char message[] = "groved: cannot execute the daemon binary\n";
    ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
    (void)ignored;
    _exit(127);
  }
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
