// What a daemon serves a job's PMI ranks (SimplePmiHost::facts_of), from
// grove's own mapper: PMI_process_mapping puts ranks on one node exactly
// when they share a daemon, for every policy and rank order.
#include <catch2/catch.hpp>

#include <algorithm>

#include "daemon/simple_pmi_host.h"
#include "jobs/job_map.h"
#include "pmi/process_mapping.h"

using namespace grove;

TEST_CASE("PMI_process_mapping as a daemon serves it is exact for grove's mappings") {
  // Six daemons on four hosts (two hosts run two daemons: still two nodes),
  // uneven slots.
  const std::vector<MapDaemon> daemons{{0, 4, "a"}, {1, 2, "b"}, {2, 3, "b"},
                                       {3, 4, "c"}, {4, 1, "d"}, {5, 2, "a"}};
  std::uint32_t checked = 0;
  for (const char* policy : {"slot", "node", "ppr:2:node", "ppr:1:node"}) {
    for (const char* rank_by : {"", "slot", "node"}) {
      for (std::uint32_t np : {1u, 5u, 16u, 23u}) {
        auto spec_policy = parse_map_policy(policy);
        REQUIRE(spec_policy);
        if (*rank_by != '\0') spec_policy->rank_by = *parse_rank_by(rank_by);
        auto map = map_ranks(np, daemons, *spec_policy);
        if (!map) continue;  // ppr caps the ranks
        JobSpec spec;
        spec.job = 1;
        spec.nspace = "grove.1";
        spec.ranks = map->ranks;
        for (Vpid vpid : map->daemons)
          spec.hostnames.push_back(daemons[vpid].hostname);
        const pmi::JobFacts facts = SimplePmiHost::facts_of(spec, 0);
        INFO(policy << " rank-by " << rank_by << " np " << np << ": " << facts.process_mapping);
        REQUIRE(!facts.process_mapping.empty());
        const auto blocks = pmi::parse_mapping(facts.process_mapping);
        REQUIRE(blocks);
        const auto nodes = pmi::expand_mapping(*blocks, static_cast<std::uint32_t>(np));
        REQUIRE(nodes.size() == np);
        // Same node id exactly when the same daemon (a node is a daemon).
        for (std::uint32_t r = 0; r < np; ++r) {
          for (std::uint32_t s = 0; s < np; ++s)
            REQUIRE((nodes[r] == nodes[s]) == (spec.ranks[r].daemon == spec.ranks[s].daemon));
        }
        CHECK(facts.local_ranks == static_cast<std::uint32_t>(std::count_if(
                                       spec.ranks.begin(), spec.ranks.end(),
                                       [](const RankPlacement& p) { return p.daemon == 0; })));
        ++checked;
      }
    }
  }
  CHECK(checked == 36);  // 48 cases, less ppr:1 and ppr:2 over 16 and 23 ranks (6 and 12 fit)
}
