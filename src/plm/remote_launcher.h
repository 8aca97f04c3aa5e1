// What the controller needs of whichever launcher (ssh, srun) started the
// daemons on other hosts, once they run: its client processes reaped, counted
// and, at a stop that hangs, signalled.
#pragma once

#include <cstddef>

namespace grove {

enum class RemoteLauncherKind { ssh, slurm };

class RemoteLauncher {
 public:
  virtual ~RemoteLauncher() = default;
  // Reaps client processes that have exited (call on SIGCHLD).
  virtual void reap() = 0;
  // Client processes still running.
  virtual std::size_t running() const = 0;
  virtual void signal_all(int signal) = 0;
};

}  // namespace grove
