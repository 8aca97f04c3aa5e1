// A rank, a forked rank and a launch as a daemon's JobHost keeps them:
// shared by the files of job_host*.cc, not by JobHost's users.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "jobs/host/job_host.h"
#include "jobs/host/rank_stdin.h"
#include "os/io_watch.h"
#include "os/timer.h"

namespace grove {

struct JobHost::Rank {
  JobHost* host = nullptr;
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  pid_t pid = -1;
  Fd pipes[2];         // stdout, stderr (read ends)
  IoWatch watches[2];  // read the pipes (disabled while the job's output is paused)
  std::string partial[2];
  bool closed[2] = {false, false};
  bool exited = false;
  bool reported = false;
  int wait_status = 0;
  std::string start_error;
  std::unique_ptr<RankStdin> input;  // when it reads grove run's stdin
};

struct ChildPipe {
  Fd read;
  Fd write;
};

// A rank started (grove-exec) and waiting for the daemon's go before it execs its program.
struct JobHost::HeldRank {
  Rank* rank = nullptr;
  pid_t pid = -1;
  int bind_error = 0;  // its CPUs could not be set: it never gets its go
  ChildPipe out_pipe, err_pipe, exec_pipe, go_pipe;  // the daemon's ends
  ChildPipe in_pipe;                                 // when it reads grove run's stdin
};

// A launch whose ranks here have not all started (job_host_launch.cc).
struct JobHost::Launch {
  JobHost* host = nullptr;
  JobSpec spec;
  std::vector<std::uint32_t> ranks;  // this daemon's, in rank order
  std::size_t next = 0;              // the first not yet in a slice
  bool killed = false;               // the job was killed: no more forks
  Timer next_pass;                   // starts the next slice on a later pass
};

}  // namespace grove
