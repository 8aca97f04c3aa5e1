// Which CPUs a job's ranks get when the DVM runs several jobs: mpirun's
// default binding (when the user gave no --bind-to) and the offset that
// keeps a bound job off the cores of the jobs already running on a host.
// Pure: the job manager hands in the map and what runs where.
#pragma once

#include <cstdint>
#include <map>
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

// Moves every rank's host_rank past the ranks (of `cores_per_rank` cores)
// that fit in the cores in use on its host, so concurrent bound jobs take
// different cores while there are free ones (binding wraps around after).
void offset_host_ranks(JobMap& map, const std::vector<MapDaemon>& daemons,
                       std::uint32_t cores_per_rank, const HostCoresInUse& in_use);

}  // namespace grove
