#include "jobs/job_messages.h"

#include <algorithm>

namespace grove {

bool JobSpec::wire_valid() const {
  if (apps.empty()) return false;
  std::uint64_t app_ranks = 0;
  for (const JobApp& app : apps) {
    if (app.argv.empty() || app.np == 0) return false;
    app_ranks += app.np;
  }
  if (app_ranks != ranks.size()) return false;
  if (!node_slots.empty() && node_slots.size() != hostnames.size()) return false;
  if (!valid_bind_to(bind_to)) return false;
  if (stdin_rank < kStdinAll || stdin_rank >= static_cast<std::int64_t>(ranks.size())) return false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank != i) return false;
  }
  return true;
}

std::uint32_t JobSpec::app_of(std::uint32_t rank) const {
  std::uint32_t first = 0;
  for (std::uint32_t app = 0; app < apps.size(); ++app) {
    first += apps[app].np;
    if (rank < first) return app;
  }
  return static_cast<std::uint32_t>(apps.size()) - 1;
}

std::uint32_t JobSpec::cores_per_rank() const {
  auto spec = parse_map_policy(map_by);
  return spec ? spec->pe : 1;
}

bool JobSpec::node_oversubscribed(std::uint32_t node_id) const {
  if (node_id >= node_slots.size()) return false;
  // Daemons that share a host (one name) share its cores: counted per host,
  // so every rank of a host is told the same. Per daemon, 8 ranks on 4
  // daemons of a 2-core host were told none was oversubscribed, and Open
  // MPI busy-polled 2 cores with 8 ranks.
  const std::string& host = hostnames[node_id];
  std::uint64_t slots = 0;
  for (std::size_t node = 0; node < node_slots.size(); ++node) {
    if (hostnames[node] == host) slots = std::max<std::uint64_t>(slots, node_slots[node]);
  }
  std::uint64_t here = 0;
  for (const RankPlacement& placement : ranks) {
    here += placement.node_id < hostnames.size() && hostnames[placement.node_id] == host ? 1 : 0;
  }
  return here > slots;
}

}  // namespace grove
