/* grove-exec: the first program of every rank (src/jobs/rank_spawn.h).
 *
 * A daemon starts a rank with posix_spawn, which does not copy the daemon's
 * address space, of this small program; it waits for the daemon's go (the
 * daemon has recorded its pid, limits and CPUs meanwhile), then moves into
 * the rank's directory and execs the rank's program, which keeps its pid.
 *
 *   grove-exec DAEMON_PID DIR PROGRAM [ARG...]
 *
 * fd 3: the go pipe (one byte: go; end-of-file: never start). fd 4: the
 * exec pipe, closed by a successful exec; otherwise one int is written to
 * it: the errno of exec, or minus the errno of chdir. DIR empty: stay. The
 * program is looked up in the rank's own PATH (its environment is this
 * one's). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 4) return 127;
  /* A rank does not outlive its daemon, even one killed by SIGKILL: nobody
   * would be left to end it. If the daemon is already gone, stop. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != (pid_t)atol(argv[1])) _exit(127);
  fcntl(4, F_SETFD, FD_CLOEXEC);
  char go = 0;
  ssize_t got;
  do {
    got = read(3, &go, 1);
  } while (got < 0 && errno == EINTR);
  if (got != 1) _exit(127);
  close(3);
  int code = 0;
  if (argv[2][0] != '\0' && chdir(argv[2]) != 0) {
    code = -errno; /* negative: the directory, not the program */
  } else {
    execvp(argv[3], argv + 3);
    code = errno;
  }
  ssize_t ignored = write(4, &code, sizeof code);
  (void)ignored;
  _exit(127);
}
