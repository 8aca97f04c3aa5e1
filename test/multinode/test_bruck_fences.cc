// Fences as Bruck exchanges (grpcomm_fence_topology bruck) on real daemons:
// PMIx fence jobs with their data checked on every rank (mixed sizes, a
// subset of the daemons, barriers), and a member killed mid-exchange by a
// debug_fault point, after which every survivor ends the round the same way
// with identical bytes and the DVM goes on.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "dvm_harness.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

std::string fence_client() {
  return binary_from_env("GROVE_PMIX_FENCE_CLIENT");
}

const std::vector<std::string> kBruck = {"--mca", "grpcomm_fence_topology", "bruck",
                                         "--mca", "grpcomm_base_verbose",   "1"};

std::vector<std::string> with_bruck(std::vector<std::string> more) {
  std::vector<std::string> args = kBruck;
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

struct Ending {
  std::string status;
  std::string detail;  // the digest of an ok round, the lost vpid otherwise
};

// Every daemon's "fence 'SIG' round N ended ..." line for one signature: vpid -> round -> ending.
std::map<int, std::map<int, Ending>> fence_endings(const std::string& log,
                                                   const std::string& signature) {
  std::map<int, std::map<int, Ending>> out;
  std::regex line(
      R"(\[(?:groved vpid (\d+)|grove controller)[^\]]*\][^\n]*fence '([^']+)' round (\d+) ended ([a-z-]+)(?:: \d+ bytes, digest ([0-9a-f]+)| \(lost vpid (\d+)\)))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    if ((*it)[2] != signature) continue;
    const int vpid = (*it)[1].matched ? std::stoi((*it)[1]) : 0;
    out[vpid][std::stoi((*it)[3])] =
        Ending{(*it)[4], (*it)[5].matched ? std::string((*it)[5]) : std::string((*it)[6])};
  }
  return out;
}

// Frames of one type and tag in `grove status --json`'s engine table, over every daemon.
std::uint64_t frames_of(const nlohmann::json& status, const std::string& type) {
  return sum_traffic(status["engine_total"], type, type).first;
}

}  // namespace

TEST_CASE("PMIx fences as Bruck exchanges: data on every rank, mixed sizes, subsets, barriers",
          "[bruck]") {
  Dvm dvm(8, kBruck);
  REQUIRE(dvm.ready());
  // 24 ranks over all 8 daemons, 3 rounds, values up to 192 KB.
  auto all = dvm.grove({"run", "-n", "24", "--map-by", "node", fence_client(), "--rounds", "3",
                        "--max-bytes", "196608"},
                       std::chrono::seconds(240));
  INFO("grove run's stderr: " << all.err);
  INFO("the DVM's log: " << dvm.controller().err());
  REQUIRE(all.exit_code == 0);
  auto results = fence_client_results(all.out);
  REQUIRE(results.size() == 24);
  std::set<std::string> digests;
  for (const auto& [rank, entry] : results)
    digests.insert(entry.second);
  CHECK(digests.size() == 1);
  CHECK(results[0].first >= 1'000'000);
  // 5 ranks on 5 of the 8 daemons: an exchange among those five only.
  auto subset = dvm.grove({"run", "-n", "5", "--map-by", "node", fence_client(), "--rounds", "4",
                           "--max-bytes", "4096"});
  INFO("subset's stderr: " << subset.err);
  REQUIRE(subset.exit_code == 0);
  CHECK(fence_client_results(subset.out).size() == 5);
  auto barrier = dvm.grove({"run", "-n", "16", fence_client(), "--rounds", "20", "--barrier"});
  CHECK(barrier.exit_code == 0);
  CHECK(fence_client_results(barrier.out).size() == 16);
  // No fence took a tree: no rollups and no fence releases anywhere.
  auto status = dvm.status();
  CHECK(status["fence_topology"] == "bruck");
  CHECK(frames_of(status, "fence-exchange") > 0);
  CHECK(frames_of(status, "fence-rollup") == 0);
  dvm.stop();
}

TEST_CASE("a member killed mid-exchange: every survivor ends the round alike, the DVM goes on",
          "[bruck]") {
  constexpr int kDaemons = 8;
  for (int victim : {1, 4, 7}) {
    INFO("victim " << victim);
    // The victim dies as the first frame of the first exchange arrives:
    // its later rounds never go (its round 0 usually has: the round then
    // ends ok; if the others outran its start, participant-lost: alike
    // everywhere, either way).
    Dvm dvm(kDaemons,
            with_bruck({"--mca", "debug_fault", std::to_string(victim) + ":exchange-received:1",
                        "--mca", "daemon_heartbeat_ms", "0"}));
    REQUIRE(dvm.ready());
    auto bench = dvm.bench("barrier", "0", 1);
    CHECK(bench["fence_topology"] == "bruck");
    CHECK(bench["spans_us"].size() == 1);  // it returned: nothing hung
    // The bench returns as the controller ends the round; the others end it
    // by themselves, those that needed the victim's rounds once its death
    // is declared and a new run among the survivors has ended.
    auto survivors_ended = [&] {
      auto endings = fence_endings(dvm.controller().err(), "bench-barrier");
      for (int vpid = 0; vpid < kDaemons; ++vpid) {
        if (vpid != victim && endings[vpid].count(1) == 0) return false;
      }
      return true;
    };
    CHECK(wait_until(survivors_ended, std::chrono::seconds(60)));
    const std::string log = dvm.controller().err();
    INFO("the DVM's log: " << log);
    CHECK_THAT(log, Catch::Contains("debug_fault: dying at exchange-received"));
    auto after = dvm.status();
    CHECK(after["failed"] == nlohmann::json::array({victim}));
    auto endings = fence_endings(log, "bench-barrier");
    std::set<std::string> outcomes;
    for (int vpid = 0; vpid < kDaemons; ++vpid) {
      if (vpid == victim) continue;
      INFO("vpid " << vpid);
      REQUIRE(endings[vpid].count(1) == 1);
      outcomes.insert(endings[vpid][1].status + " " + endings[vpid][1].detail);
    }
    CHECK(outcomes.size() == 1);  // the same status and bytes (or lost daemon) everywhere
    // The next rounds run among the survivors.
    CHECK(dvm.bench("barrier", "0", 3)["spans_us"].size() == 3);
    dvm.stop();
  }
}
