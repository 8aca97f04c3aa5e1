// What a job is asked to be: its programs (one for `grove run`, several for
// MPI_Comm_spawn_multiple), their environment, how many ranks and how to map
// them. The control socket decodes it (control/control_request.h);
// the controller's job manager runs it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "jobs/job_map.h"
#include "jobs/job_messages.h"

namespace grove {

// The most ranks one job may have, and hosts one -H/--hostfile may name:
// bounds on what a request can make the controller do.
inline constexpr std::uint32_t kMaxRanksPerJob = 1u << 20;
inline constexpr std::size_t kMaxHostChoices = 4096;

struct JobRequest {
  std::vector<JobApp> apps;      // at least one
  std::vector<std::string> env;  // NAME=value, for every app's ranks
  // `env` is the ranks' whole environment (grove run forwards its caller's),
  // not additions to the daemon's.
  bool env_replaces = false;
  MapSpec policy;
  // false (--nooversubscribe): more ranks than a host's slots is refused.
  bool oversubscribe = true;
  std::uint32_t timeout_s = 0;  // 0: none
  // Which ranks read grove run's stdin (JobSpec::stdin_rank).
  std::int64_t stdin_rank = JobSpec::kStdinNone;
  std::string bind_to = "none";  // JobSpec::bind_to
  // No --bind-to given: mpirun's default, chosen once the job is mapped
  // (JobTable::submit; docs/jobs.md, "Binding").
  bool bind_default = false;
  // --bind-to core:overload-allowed: more ranks than a host's cores (or
  // hwthreads) may share them; without it such a job is refused.
  bool overload_allowed = false;
  bool report_bindings = false;
  bool display_map = false;             // the started event carries the map
  std::string mpi = "auto";             // JobSpec::mpi
  std::vector<std::string> pmi_preput;  // JobSpec::pmi_preput
  // grove run -H/--hostfile: only these hosts' daemons (empty: all).
  std::vector<HostChoice> hosts;
  // Runtime parameters the caller set for this run (name, canonical value):
  // none applies to one job, so each must be what the DVM already runs with.
  std::vector<std::pair<std::string, std::string>> runtime_params;

  // The job's ranks: every app's. 0 (grove run without -n): one per slot.
  std::uint32_t np() const {
    std::uint32_t total = 0;
    for (const JobApp& app : apps)
      total += app.np;
    return total;
  }
};

}  // namespace grove
