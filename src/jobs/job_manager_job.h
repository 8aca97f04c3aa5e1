// The job manager's record of one running job, shared by the files that
// implement JobManager (job_manager.cc, job_manager_spawn.cc): not for its
// users.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jobs/job_manager.h"
#include "os/timer.h"

namespace grove {

struct JobManager::Job {
  JobManager* manager = nullptr;
  std::uint32_t id = 0;
  JobSpec spec;
  JobEventFn events;
  std::set<std::uint32_t> finished;  // ranks known to be gone
  std::set<std::uint32_t> started;   // ranks whose program runs (or ran)
  // A spawned job's PMIx_Spawn answer, held until every rank has started.
  std::function<void(Status)> launched;
  bool failed = false;
  int status = 0;
  std::string message;
  Timer timer;                             // --timeout
  std::map<Vpid, std::uint64_t> withheld;  // output bytes not yet acknowledged, by daemon
  Timer ack_timer;                         // polls the CLI's queue while acks wait
  std::vector<GoneRank> gone_unsent;       // clean exits the daemons have not heard of
  Timer gone_timer;                        // gathers them into one broadcast
  std::optional<std::uint32_t> parent;     // the job whose rank spawned this one
  std::set<std::uint32_t> children;        // jobs spawned from this one, still running
  std::size_t daemons = 0;                 // that host its ranks
  std::int64_t started_s = 0;              // wall clock, for grove ps
  bool killed = false;                     // ended by kill(), not by its ranks
  struct PendingStdin {
    std::set<Vpid> waiting;  // daemons that have not answered
    bool open = false;
    std::function<void(bool open)> done;
  };
  std::uint64_t stdin_seq = 0;
  std::map<std::uint64_t, PendingStdin> stdin_pending;
};

}  // namespace grove
