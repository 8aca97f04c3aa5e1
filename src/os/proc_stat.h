// What /proc/PID/stat says of a process: its state letter, parent, group and
// when it started. Read by the job signaller, the CLI's check for live DVMs
// and the tests' process probes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

namespace grove {

struct ProcStat {
  char state = '?';  // R, S, T (stopped), Z (zombie), ...
  pid_t parent = 0;
  pid_t group = 0;
  // Clock ticks since boot: with the pid, it names one process even after
  // the pid is reused.
  std::uint64_t start_ticks = 0;
};

// Nothing if the process is gone (or /proc cannot be read).
std::optional<ProcStat> read_proc_stat(pid_t pid);

// Whether process `pid` has not ended: it exists (another user's counts)
// and is not a zombie (a killed process some inits reap late).
bool process_running(pid_t pid);

}  // namespace grove
