// Looking at processes a test started, or their descendants: their state
// from /proc and whether they have ended (wait for either with
// support/wait.h). Header-only: the programs that use it link grove's util
// (proc_stat) and the test support library.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>

#include "os/proc_stat.h"
#include "support/wait.h"

namespace grove::test {

// The state letter of /proc/PID/stat ('T' stopped, 'Z' zombie); '?' if gone.
inline char state_of(pid_t pid) {
  const auto stat = read_proc_stat(pid);
  return stat ? stat->state : '?';
}

// Gone, or a zombie its parent (often init) has not reaped yet.
inline bool ended(pid_t pid) {
  return kill(pid, 0) != 0 || state_of(pid) == 'Z';
}

}  // namespace grove::test
