#include "plm/piped_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "os/child_process.h"

extern char** environ;

namespace grove {
namespace {

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
  std::vector<std::string> environment = set_environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('='));
    bool overridden = false;
    for (const auto& set : set_environment)
      overridden = overridden || set.compare(0, name.size() + 1, std::string(name) + "=") == 0;
    if (!overridden) environment.emplace_back(text);
  }
  ChildSpec child;
  child.mechanism = StartMechanism::fork;
  child.argv = argv;
  child.env = std::span<const std::string>(environment);
  child.fds = {ChildFd::copy(STDIN_FILENO, in[0]), ChildFd::copy(STDOUT_FILENO, out[1]),
               ChildFd::copy(STDERR_FILENO, err[1])};
  child.close_from = 3;
  child.group = ProcessGroup::own_session;  // no terminal to prompt on
  // A client still connecting when its launcher dies must not linger.
  child.parent_death_signal = SIGTERM;
  child.signals = SignalReset::all;
  child.mask = SignalMask::empty;
  child.restore_open_files = true;
  child.restore_cpus = true;  // an ssh (or a local agent's daemon) is not kept on a relay's CPU
  child.exec_failure = ExecFailure::child_exits;  // seen as its stderr and exit status 127
  child.exec_failure_message = exec_failure;
  auto started = start_child(child);
  close_all({in[0], out[1], err[1]});
  if (!started) {
    close_all({in[1], out[0], err[0]});
    return started.error();
  }
  const int pid = started->pid;
  for (int fd : {in[1], out[0], err[0]})
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);  // the launcher's loop reads and writes
  return PipedChild{pid, in[1], out[0], err[0]};
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace grove
