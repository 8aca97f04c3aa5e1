// Which CPUs a job's ranks get when the DVM runs several jobs: mpirun's
// default binding (when the user gave no --bind-to) and the offset that
// keeps a bound job off the cores of the jobs already running on a host.
// Pure: the job manager hands in the map and what runs where.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jobs/job_map.h"

namespace grove {

// Cores already taken on each host (by host name) by the DVM's running jobs.
using HostCoresInUse = std::map<std::string, std::uint64_t>;

// mpirun's default: none if any host of the job would then hold more ranks'
// cores (its own and `in_use`) than it has cores (its slots when hwloc did
// not say); else core with :pe=K or for at most two ranks, socket otherwise.
std::string default_binding(const JobMap& map, const std::vector<MapDaemon>& daemons,
                            const MapSpec& spec, const HostCoresInUse& in_use);

// The cores (by index among a host's usable cores, as rank_binding counts
// them) that running core-bound jobs hold, by host name.
using HostCoresTaken = std::map<std::string, std::set<std::uint32_t>>;

// Gives each rank of a core-bound job (of `cores_per_rank` cores) the first
// free run of cores on its host, so concurrent jobs take different cores
// while there are free ones: its host_rank becomes that run's index. A rank
// finding no free run keeps its own (binding wraps around, shared).
void place_on_free_cores(JobMap& map, const std::vector<MapDaemon>& daemons,
                         std::uint32_t cores_per_rank, const HostCoresTaken& taken);

}  // namespace grove
