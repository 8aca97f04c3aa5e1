#include "launcher/log_tee.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

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
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    // The copier holds nothing but its three ends: a descriptor it kept
    // open (the pipe's write end, a readiness pipe) would keep its reader
    // waiting for ever.
    signal(SIGPIPE, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    const int terminal = dup(terminal_fd);
    const int log = dup(log_fd);
    if (terminal < 0 || log < 0 || dup2(fds[0], STDIN_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0 ||
        dup2(terminal, STDERR_FILENO) < 0) {
      _exit(1);
    }
    if (syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      // Kernels before 5.9 (or a seccomp filter) refuse it: one by one.
      const long most = sysconf(_SC_OPEN_MAX);
      for (long fd = 3; fd < (most > 0 ? most : 1024); ++fd)
        close(static_cast<int>(fd));
    }
    copy_until_closed();
  }
  close(fds[0]);
  return fds[1];
}

}  // namespace grove
