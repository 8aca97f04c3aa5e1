// A launcher's client process (ssh, srun): forked and exec'd with its
// standard input, output and error on pipes whose other ends the launcher
// reads and writes without blocking.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace grove {

struct PipedChild {
  int pid = -1;
  int in_fd = -1;   // its standard input; non-blocking, close-on-exec
  int out_fd = -1;  // its standard output
  int err_fd = -1;  // its standard error
};

// Starts argv[0] (searched on PATH) with `set_environment` ("NAME=VALUE")
// added to ours. The child gets a session of its own (no terminal to prompt
// on), dies with SIGTERM when we do, default signal handling, an empty
// signal mask and no descriptor of ours but the three pipes. If exec fails
// it writes `exec_failure` to its standard error and exits 127.
Result<PipedChild> start_piped_child(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& set_environment,
                                     const std::string& exec_failure);

// "exited with status N" or "was killed by signal N", from a wait status.
std::string describe_exit(int status);

}  // namespace grove
