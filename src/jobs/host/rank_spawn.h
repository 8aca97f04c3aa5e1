// How a daemon starts a rank's process: posix_spawn (os/child_process.h,
// StartMechanism::spawn) of grove-exec (src/jobs/grove_exec.c), which does
// not copy the daemon's address space. fork did, and every page the daemon
// then wrote while its children still shared it was copied, once per child:
// at 2000 ranks per daemon a rank cost its daemon 9 ms of copying and TLB
// flushes. The child starts in its own process group with default signal
// handling, an empty signal mask and only its stdin, stdout, stderr and the
// go and exec pipes; the daemon then sets its open-file limit and CPUs (the
// daemon's own were raised and bound) and lets it go, and grove-exec execs
// the rank's program, which keeps the pid.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

// Where a rank finds its PMI connection (PMI_FD): after stdin, stdout,
// stderr, and grove-exec's go and exec pipes, which exec closes.
inline constexpr int kRankPmiFd = 5;

struct RankSpawn {
  std::vector<std::string> argv;  // the program, then its arguments
  std::vector<std::string> env;   // "NAME=value", the whole environment
  std::string cwd;                // empty: the daemon's
  int stdin_fd = -1;              // -1: /dev/null
  int stdout_fd = -1;
  int stderr_fd = -1;
  int go_fd = -1;    // the read end of the go pipe
  int exec_fd = -1;  // the write end of the exec pipe
  int pmi_fd = -1;   // the rank's end of its PMI connection (-1: none), at kRankPmiFd
  // The CPUs it may run on; nothing: the CPUs the daemon was given.
  std::optional<std::vector<int>> cpus;
};

struct SpawnedRank {
  pid_t pid = -1;
  // Not 0: setting its CPUs failed with this errno (it waits for a go that
  // must not come).
  int bind_error = 0;
};

// grove-exec next to the running program (a build tree), or in
// ../libexec/grove from it (an install); an Error names where it looked.
Result<std::string> find_grove_exec();

// Starts `spawn` through grove-exec at `helper`; the child waits on go_fd.
Result<SpawnedRank> spawn_rank(const std::string& helper, const RankSpawn& spawn);

}  // namespace grove
