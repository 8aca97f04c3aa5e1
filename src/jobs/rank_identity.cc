#include "jobs/rank_identity.h"

namespace grove {

std::vector<std::string> rank_identity_env(const RankPlacement& placement, std::uint32_t job_size,
                                           std::uint32_t local_size) {
  const std::pair<const char*, std::uint32_t> facts[] = {
      {"RANK", placement.rank},
      {"SIZE", job_size},
      {"LOCAL_RANK", placement.local_rank},
      {"LOCAL_SIZE", local_size},
      {"NODE_RANK", placement.node_rank},
  };
  std::vector<std::string> env;
  env.reserve(2 * std::size(facts));
  for (const char* prefix : {"GROVE_", "OMPI_COMM_WORLD_"}) {
    for (const auto& [name, value] : facts)
      env.push_back(prefix + std::string(name) + "=" + std::to_string(value));
  }
  return env;
}

}  // namespace grove
