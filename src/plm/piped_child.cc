#include "plm/piped_child.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <event2/util.h>

#include "os/cpu_binding.h"
#include "os/process_limits.h"

extern char** environ;

namespace grove {
namespace {

// In the forked child, before exec. Only async-signal-safe calls.
void become_child(int in_fd, int out_fd, int err_fd) {
  setsid();
  // A client still connecting when its launcher dies must not linger.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  struct sigaction plain {};
  plain.sa_handler = SIG_DFL;
  sigemptyset(&plain.sa_mask);
  for (int signal = 1; signal < NSIG; ++signal)
    sigaction(signal, &plain, nullptr);
  // dup2 onto itself keeps close-on-exec: clear it by hand then.
  for (auto [from, to] : {std::pair{in_fd, STDIN_FILENO}, std::pair{out_fd, STDOUT_FILENO},
                          std::pair{err_fd, STDERR_FILENO}}) {
    if (from == to) {
      fcntl(to, F_SETFD, 0);
    } else {
      dup2(from, to);
    }
  }
  if (syscall(SYS_close_range, 3U, ~0U, 0) != 0) {
    const long limit = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < limit; ++fd)
      close(fd);
  }
  restore_open_file_limit();
  restore_cpu_affinity();  // an ssh (or a local agent's daemon) is not kept on a relay's CPU
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) close(fd);
}

}  // namespace

Result<PipedChild> start_piped_child(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& set_environment,
                                     const std::string& exec_failure) {
  if (argv.empty()) return Error{"no command to start"};
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    const int saved = errno;
    close_all({in[0], in[1], out[0], out[1], err[0], err[1]});
    return Error{std::string("pipe: ") + std::strerror(saved)};
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  std::vector<std::string> args = argv;
  std::vector<char*> arg_pointers;
  for (auto& arg : args)
    arg_pointers.push_back(arg.data());
  arg_pointers.push_back(nullptr);
  std::vector<std::string> environment = set_environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    bool overridden = false;
    for (const auto& set : set_environment)
      overridden = overridden || set.compare(0, name.size() + 1, std::string(name) + "=") == 0;
    if (!overridden) environment.emplace_back(text);
  }
  std::vector<char*> environment_pointers;
  for (auto& entry : environment)
    environment_pointers.push_back(entry.data());
  environment_pointers.push_back(nullptr);
  const std::string failure = exec_failure + "\n";
  // Signals stay blocked across fork until the child has reset their handlers.
  sigset_t all, parent_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &parent_mask);
  const pid_t pid = fork();
  if (pid == 0) {
    become_child(in[0], out[1], err[1]);
    execvpe(arg_pointers[0], arg_pointers.data(), environment_pointers.data());
    ssize_t ignored = write(STDERR_FILENO, failure.data(), failure.size());
    (void)ignored;
    _exit(127);
  }
  const int fork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &parent_mask, nullptr);
  close_all({in[0], out[1], err[1]});
  if (pid < 0) {
    close_all({in[1], out[0], err[0]});
    return Error{std::string("fork: ") + std::strerror(fork_errno)};
  }
  for (int fd : {in[1], out[0], err[0]})
    evutil_make_socket_nonblocking(fd);
  return PipedChild{pid, in[1], out[0], err[0]};
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace grove
