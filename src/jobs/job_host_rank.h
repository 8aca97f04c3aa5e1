// A rank as its daemon's JobHost keeps it: shared by the files of
// job_host*.cc, not by JobHost's users.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "jobs/job_host.h"
#include "jobs/rank_stdin.h"

namespace grove {

struct JobHost::Rank {
  JobHost* host = nullptr;
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  pid_t pid = -1;
  Fd pipes[2];  // stdout, stderr (read ends)
  EventPtr events[2];
  std::string partial[2];
  bool closed[2] = {false, false};
  bool exited = false;
  bool reported = false;
  int wait_status = 0;
  std::string start_error;
  std::unique_ptr<RankStdin> input;  // when it reads grove run's stdin
  struct Callback {
    Rank* rank;
    int which;
  } callbacks[2];
};

}  // namespace grove
