#include "jobs/job_messages.h"

namespace grove {

bool JobSpec::wire_valid() const {
  if (argv.empty()) return false;
  if (!node_slots.empty() && node_slots.size() != hostnames.size()) return false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank != i) return false;
  }
  return true;
}

bool JobSpec::node_oversubscribed(std::uint32_t node_id) const {
  if (node_id >= node_slots.size()) return false;
  std::uint64_t here = 0;
  for (const RankPlacement& placement : ranks)
    here += placement.node_id == node_id ? 1 : 0;
  return here > node_slots[node_id];
}

}  // namespace grove
