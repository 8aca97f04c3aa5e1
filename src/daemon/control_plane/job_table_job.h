// The job table's record of one running job, shared by the files that
// implement JobTable (job_table.cc, job_table_flow.cc, job_table_spawn.cc):
// not for its users.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/control_plane/job_table.h"

namespace grove {

struct JobTable::Job {
  std::uint32_t id = 0;
  JobSpec spec;
  std::size_t daemons = 0;       // that host its ranks
  std::int64_t started_s = 0;    // wall clock, for grove ps
  std::optional<Requester> cli;  // the grove run that waits for it (none: spawned)
  // A spawned job's PMIx_Spawn answer, held until every rank has started.
  std::optional<Requester> spawn_answer;
  std::optional<std::uint32_t> parent;  // the job whose rank spawned this one
  std::set<std::uint32_t> children;     // jobs spawned from this one, still running
  std::set<std::uint32_t> finished;     // ranks known to be gone
  std::set<std::uint32_t> started;      // ranks whose program runs (or ran)
  struct Ending {
    bool failed = false;
    bool killed = false;  // ended by kill(), not by its ranks
    int status = 0;
    std::string message;
  } end;
  struct Timers {
    bool timeout = false;         // --timeout armed
    bool ack_poll = false;        // polls the CLI's queue while acks wait
    bool gone_gathering = false;  // gathers clean exits into one broadcast
  } timers;
  std::map<Vpid, std::uint64_t> withheld;  // output bytes not yet acknowledged, by daemon
  std::vector<GoneRank> gone_unsent;       // clean exits the daemons have not heard of
  struct PendingStdin {
    std::set<Vpid> waiting;  // daemons that have not answered
    bool open = false;
    Requester requester = 0;
  };
  std::uint64_t stdin_seq = 0;
  std::map<std::uint64_t, PendingStdin> stdin_pending;
};

// What launch() needs besides the table: the request as it will run, where,
// for whom.
struct JobTable::Launch {
  const JobRequest& request;
  const JobMap& map;
  const std::vector<MapDaemon>& daemons;  // the map's vpids' names
  std::optional<Requester> cli;
  Job* parent = nullptr;
  std::uint32_t parent_rank = 0;
  std::int64_t now_s = 0;
};

}  // namespace grove
