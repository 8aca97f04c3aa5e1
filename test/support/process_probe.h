// Looking at processes a test started, or their descendants: their state
// from /proc, whether they have ended, and waiting (bounded) for either.
// Header-only: the programs that use it link grove's util (proc_stat).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <thread>

#include "util/proc_stat.h"

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

// Polls `condition` every 20 ms until it holds or `timeout` passes.
template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace grove::test
