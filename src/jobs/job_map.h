// Where a job's ranks run: a pure function of the daemons (their slots, from
// hwloc core counts) and the mapping policy, so it can be tested alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rml/membership.h"
#include "util/result.h"
#include "util/wire.h"

namespace grove {

enum class MapPolicy : std::uint8_t {
  slot,        // fill each daemon's slots in vpid order, then the next daemon
  node,        // one rank per daemon in turn
  ppr,         // exactly N ranks per daemon (ppr:N:node), in vpid order
  ppr_socket,  // N ranks per socket of each daemon's host (ppr:N:socket), in vpid order
};

// The most ranks of one job a daemon hosts: local ranks are numbered in 16
// bits (PMIx's local and node ranks).
inline constexpr std::uint32_t kMaxRanksPerDaemon = 65535;
// What a daemon's open-file limit lets it host: each running rank holds
// three descriptors (stdout, stderr, its PMIx connection), and the daemon
// keeps some for itself (peers, listeners, the ranks it is starting).
inline constexpr std::uint64_t kDescriptorsPerRank = 3;
inline constexpr std::uint64_t kDescriptorsKept = 1024;
std::uint32_t max_ranks_for_open_files(std::uint64_t open_files);

// A policy and, for ppr, its N.
struct MapSpec {
  MapPolicy policy = MapPolicy::slot;
  std::uint32_t per_node = 0;
  bool operator==(const MapSpec&) const = default;
};

struct MapDaemon {
  Vpid vpid = 0;
  std::uint32_t slots = 1;
  std::string hostname;
  std::uint32_t sockets = 1;
  // The most ranks of one job it can host (max_ranks_for_open_files).
  std::uint32_t max_ranks = kMaxRanksPerDaemon;
  std::uint32_t cores = 0;  // its host's, as hwloc counts them (0: not known)
};

struct RankPlacement {
  std::uint32_t rank = 0;
  Vpid daemon = 0;
  std::uint16_t local_rank = 0;  // among the job's ranks on that daemon
  std::uint16_t node_rank = 0;   // the same: one daemon per node
  std::uint32_t node_id = 0;     // index of the daemon among the job's daemons
  // Among the job's ranks on daemons of the same host name (daemons sharing a
  // host count as one): where --bind-to places it.
  std::uint32_t host_rank = 0;

  static constexpr const char* wire_name = "rank placement";
  static auto wire_fields(auto& m) {
    return std::tie(m.rank, m.daemon, m.local_rank, m.node_rank, m.node_id, m.host_rank);
  }
};

struct JobMap {
  std::vector<RankPlacement> ranks;  // in rank order
  std::vector<Vpid> daemons;         // daemons hosting at least one rank, ascending
  // By node index (parallel to `daemons`): the slots of that node, as
  // placed; a node holding more ranks than this is oversubscribed.
  std::vector<std::uint32_t> node_slots;
  bool oversubscribed = false;  // more ranks than slots
};

// slot (or core), node, ppr:N:node or ppr:N:socket.
Result<MapSpec> parse_map_policy(const std::string& text);
// The policy as parse_map_policy reads it ("slot", "node", "ppr:4:node").
std::string map_policy_text(MapSpec spec);
// Maps `np` ranks onto living daemons. With more ranks than slots the
// mapping wraps around (oversubscribing) and says so; ppr never wraps: more
// than N ranks per daemon is an error. A job that would put more ranks on a
// daemon than its max_ranks is refused, naming the daemon and the limit.
Result<JobMap> map_ranks(std::uint32_t np, const std::vector<MapDaemon>& daemons, MapSpec spec);
// How many ranks fill `daemons` without oversubscribing (mpirun without -n):
// every host's slots, counted once for daemons that share a host, or N per
// daemon (per socket) for ppr.
std::uint32_t ranks_to_fill(const std::vector<MapDaemon>& daemons, MapSpec spec);
// --bind-to core without :overload-allowed: the first host that would have
// more of the map's ranks than cores (they would share cores), as an error
// naming it; nothing when every host has a core per rank (or unknown cores).
Status check_core_overload(const JobMap& map, const std::vector<MapDaemon>& daemons);

}  // namespace grove
