#include "launcher/log_tee.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "os/child_process.h"

namespace grove {
namespace {

// Writes all of `size` bytes; false once the descriptor refuses.
bool write_all(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    const ssize_t wrote = write(fd, data, static_cast<size_t>(size));
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    data += wrote;
    size -= wrote;
  }
  return true;
}

[[noreturn]] void copy_until_closed() {
  bool terminal = true;
  char buffer[65536];
  for (;;) {
    const ssize_t got = read(STDIN_FILENO, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) _exit(0);
    (void)write_all(STDOUT_FILENO, buffer, got);
    if (terminal) terminal = write_all(STDERR_FILENO, buffer, got);
  }
}

}  // namespace

int start_log_tee(int log_fd, int terminal_fd) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  // The copier holds nothing but its three ends: a descriptor it kept open
  // (the pipe's write end, a readiness pipe) would keep its reader waiting
  // for ever.
  ChildSpec copier;
  copier.fds = {ChildFd::copy(STDIN_FILENO, fds[0]), ChildFd::copy(STDOUT_FILENO, log_fd),
                ChildFd::copy(STDERR_FILENO, terminal_fd)};
  copier.close_from = 3;
  copier.signals = SignalReset::none;
  copier.ignore_signals = {SIGPIPE, SIGINT};
  copier.mask = SignalMask::inherit;
  auto pid = fork_child(copier, []() -> int { copy_until_closed(); });
  close(fds[0]);
  if (!pid) {
    close(fds[1]);
    return -1;
  }
  return fds[1];
}

}  // namespace grove
