#include "jobs/job_messages.h"

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

bool JobSpec::node_oversubscribed(std::uint32_t node_id) const {
  if (node_id >= node_slots.size()) return false;
  std::uint64_t here = 0;
  for (const RankPlacement& placement : ranks)
    here += placement.node_id == node_id ? 1 : 0;
  return here > node_slots[node_id];
}

}  // namespace grove
