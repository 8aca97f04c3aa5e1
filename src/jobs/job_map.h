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
// four descriptors (stdout, stderr, its PMIx connection, its PMI socket),
// and the daemon keeps some for itself (peers, listeners, the ranks it is
// starting).
inline constexpr std::uint64_t kDescriptorsPerRank = 4;
inline constexpr std::uint64_t kDescriptorsKept = 1024;
std::uint32_t max_ranks_for_open_files(std::uint64_t open_files);

// How ranks are numbered once placed (--rank-by): as mapped (each daemon's
// ranks contiguous for slot and ppr, round robin for node), or explicitly
// by slot (contiguous per daemon) or by node (round robin over the daemons).
enum class RankBy : std::uint8_t { as_mapped, slot, node };

// A policy and, for ppr, its N; `pe`: cores per rank (:pe=K, -c K), each
// rank using K of its host's slots.
struct MapSpec {
  MapPolicy policy = MapPolicy::slot;
  std::uint32_t per_node = 0;
  std::uint32_t pe = 1;
  RankBy rank_by = RankBy::as_mapped;
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
  // Among the ranks on daemons of the same host name (daemons sharing a host
  // count as one), after those of the DVM's other running jobs there: where
  // --bind-to places it (with :pe=K, its cores are K * host_rank onwards).
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

// slot (or core), node, ppr:N:node or ppr:N:socket, each optionally
// followed by :pe=K (K cores per rank).
Result<MapSpec> parse_map_policy(const std::string& text);
// The policy as parse_map_policy reads it ("slot", "node", "ppr:4:node",
// "slot:pe=2"); the rank order is not part of it.
std::string map_policy_text(MapSpec spec);
// --rank-by: slot or node (nothing given: as mapped).
Result<RankBy> parse_rank_by(const std::string& text);
// Maps `np` ranks onto living daemons. With more ranks than slots the
// mapping wraps around (oversubscribing) and says so; ppr never wraps: more
// than N ranks per daemon is an error. A job that would put more ranks on a
// daemon than its max_ranks is refused, naming the daemon and the limit.
Result<JobMap> map_ranks(std::uint32_t np, const std::vector<MapDaemon>& daemons, MapSpec spec);
// How many ranks fill `daemons` without oversubscribing (mpirun without -n):
// every host's slots, counted once for daemons that share a host, or N per
// daemon (per socket) for ppr.
std::uint32_t ranks_to_fill(const std::vector<MapDaemon>& daemons, MapSpec spec);
// One host of `grove run -H/--hostfile` on a running DVM: its name as the
// user wrote it and the slots given (0: the daemons' own).
struct HostChoice {
  std::string name;
  std::uint32_t slots = 0;
};
// Whether a host the user named (`wanted`) is the daemon's `hostname`: by
// full or short name; localhost and 127.0.0.1 name `local_host` (the
// controller's). An address has no short name ("10.0.0.5" is not "10").
bool names_host(const std::string& wanted, const std::string& hostname,
                const std::string& local_host);
// The daemons on the chosen hosts, with the slots given there. A host
// matches a daemon's by full or short name; localhost and 127.0.0.1 name
// `local_host` (the controller's). A host no daemon runs on is an error
// naming it and the DVM's hosts.
Result<std::vector<MapDaemon>> restrict_to_hosts(const std::vector<MapDaemon>& daemons,
                                                 const std::vector<HostChoice>& hosts,
                                                 const std::string& local_host);
// --bind-to core without :overload-allowed: the first host that would have
// more of the map's ranks than cores (they would share cores), as an error
// naming it; nothing when every host has a core per rank (or unknown cores).
// With K cores per rank (:pe=K), each rank needs K cores.
Status check_core_overload(const JobMap& map, const std::vector<MapDaemon>& daemons,
                           std::uint32_t cores_per_rank = 1);

}  // namespace grove
