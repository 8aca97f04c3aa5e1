#include "support/background_process.h"

#include "support/child_groups.h"
#include "support/wait.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace grove::test {

BackgroundProcess::BackgroundProcess(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& extra_env) {
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error("pipe failed");
  }
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    std::string name = text.substr(0, text.find('='));
    bool replaced = false;
    for (const auto& extra : extra_env)
      replaced = replaced || extra.substr(0, extra.find('=')) == name;
    if (!replaced) env.push_back(text);
  }
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  std::vector<std::string> args = argv;
  std::vector<char*> argv_ptrs, env_ptrs;
  for (auto& arg : args)
    argv_ptrs.push_back(arg.data());
  argv_ptrs.push_back(nullptr);
  for (auto& entry : env)
    env_ptrs.push_back(entry.data());
  env_ptrs.push_back(nullptr);
  pid_ = fork_tracked_group();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    execve(argv_ptrs[0], argv_ptrs.data(), env_ptrs.data());
    std::fprintf(stderr, "exec %s: %s\n", argv_ptrs[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  out_fd_ = out_pipe[0];
  err_fd_ = err_pipe[0];
}

BackgroundProcess::~BackgroundProcess() {
  terminate();
  if (out_fd_ >= 0) close(out_fd_);
  if (err_fd_ >= 0) close(err_fd_);
}

void BackgroundProcess::pump(int wait_ms) {
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  int ready = poll(fds, 2, wait_ms);
  if (ready <= 0) return;
  std::string* sinks[2] = {&out_, &err_};
  int* fd_slots[2] = {&out_fd_, &err_fd_};
  for (int i = 0; i < 2; ++i) {
    if (*fd_slots[i] < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    char buffer[65536];
    ssize_t got = read(*fd_slots[i], buffer, sizeof buffer);
    if (got > 0) {
      sinks[i]->append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0) {
      close(*fd_slots[i]);
      *fd_slots[i] = -1;
    }
  }
}

bool BackgroundProcess::running() {
  if (exited_) return false;
  if (waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

bool BackgroundProcess::wait_for(const std::string& needle, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (out_.find(needle) != std::string::npos || err_.find(needle) != std::string::npos) {
      return true;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (out_fd_ < 0 && err_fd_ < 0) {
      // Both pipes are closed: nothing more can arrive. The answer is no,
      // given once the process has exited (or at the deadline).
      wait_until([this] { return !running(); },
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
                 std::chrono::milliseconds(10));
      return false;
    }
    pump(20);
  }
}

bool BackgroundProcess::wait_for_match(const std::regex& pattern,
                                       std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (std::regex_search(err_, pattern)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (out_fd_ < 0 && err_fd_ < 0) return false;
    pump(20);
  }
}

int BackgroundProcess::wait_exit(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() >= deadline) return -1;
    pump(20);
  }
  while (out_fd_ >= 0 || err_fd_ >= 0)
    pump(20);
  return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
}

void BackgroundProcess::terminate(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  if (running()) {
    kill(-pid_, SIGTERM);
    kill(pid_, SIGTERM);
    auto deadline = std::chrono::steady_clock::now() + grace;
    while (running() && std::chrono::steady_clock::now() < deadline)
      pump(20);
    if (running()) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
      exited_ = true;
    }
  }
  // Whatever the group started (daemons) ends with it.
  kill(-pid_, SIGKILL);
  untrack_child_group(pid_);
  pid_ = -1;
}

}  // namespace grove::test
