// Where --bind-to puts a rank: the host_rank-th core (hwthread, socket) of
// this host, round robin, from the daemon's hwloc topology. The same answer
// on every daemon of the host, so daemons sharing a host never bind two of
// a job's ranks to one core while another is free, and every PMIx server of
// the host can tell a rank's peers where it runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/result.h"

struct hwloc_topology;

namespace grove {

struct RankBinding {
  std::vector<int> cpus;  // OS CPU numbers
  std::string cpu_list;   // "2-3", as hwloc and PMIX_CPUSET spell it
  std::string what;       // "core 1", "package 0", "hwthread 3"
  bool shared = false;    // more ranks on the host than such objects
};

// Nothing for "none"; an Error if the host has no such object. With K
// `cores_per_rank` (:pe=K), core and hwthread bind to K consecutive objects
// from the K * host_rank-th on (a socket binding is one socket still).
Result<std::optional<RankBinding>> rank_binding(hwloc_topology* topology,
                                                const std::string& bind_to, std::uint32_t host_rank,
                                                std::uint32_t cores_per_rank = 1);

}  // namespace grove
