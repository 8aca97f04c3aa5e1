// A relay of the release tree dies while it holds a release (debug_fault makes
// it die there): every surviving daemon is released with identical bytes,
// nothing hangs, the DVM goes on.
#include <catch2/catch.hpp>

#include <regex>
#include <set>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

struct Release {
  std::string digest;
  std::size_t bytes = 0;
};

// "groved vpid V ...] ... grpcomm: bench-release release op N: B bytes, digest D"
std::map<int, Release> releases_in(const std::string& log, int op) {
  std::map<int, Release> out;
  std::regex line(
      R"(\[(?:groved vpid (\d+)|grove controller)[^\]]*\][^\n]*bench-release \w+ op (\d+): (\d+) bytes, digest ([0-9a-f]+))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    if (std::stoi((*it)[2]) != op) continue;
    int vpid = (*it)[1].matched ? std::stoi((*it)[1]) : 0;
    out[vpid] = Release{(*it)[4], std::stoul((*it)[3])};
  }
  return out;
}

}  // namespace

TEST_CASE("a relay that dies holding a delivered release: every survivor gets identical bytes",
          "[dvm][faults]") {
  constexpr int kDaemons = 10;
  // Victims by their place in the release tree (`grove topo -n 10 --radix2 R`):
  // the top relay, a relay deeper down or with one child, and a leaf.
  const std::vector<std::pair<int, std::vector<int>>> cases = {{2, {1, 3, 9}}, {4, {1, 2, 8}}};
  for (const auto& [radix2, victims] : cases) {
    for (int victim : victims) {
      INFO("radix2 " << radix2 << " victim " << victim);
      // The victim holds each release before forwarding it, and dies right
      // after delivering the first: it had the bytes, its children never got
      // them from it.
      Dvm dvm(kDaemons, {"--mca", "rml_base_radix2", std::to_string(radix2), "--mca",
                         "grpcomm_release_delay_ms", "60000", "--mca",
                         "grpcomm_release_delay_target", std::to_string(victim), "--mca",
                         "debug_fault", std::to_string(victim) + ":release-delivered:1", "--mca",
                         "grpcomm_base_verbose", "1", "--mca", "daemon_heartbeat_ms", "0"});
      REQUIRE(dvm.ready());
      auto bench = dvm.bench("release", "10KB", 1);
      CHECK(bench["spans_us"].size() == 1);
      // The bench call returned: nothing hung. Every daemon logged the same
      // release, the victim included (it delivered before it died).
      const std::string log = dvm.controller().err();
      CHECK_THAT(log, Catch::Contains("debug_fault: dying at release-delivered"));
      auto releases = releases_in(log, 1);
      std::set<std::string> digests;
      for (int vpid = 0; vpid < kDaemons; ++vpid) {
        INFO("vpid " << vpid);
        REQUIRE(releases.count(vpid) == 1);
        digests.insert(releases[vpid].digest);
        CHECK(releases[vpid].bytes == 10000);
      }
      CHECK(digests.size() == 1);
      auto after = dvm.status();
      CHECK(after["failed"] == nlohmann::json::array({victim}));
      // The DVM runs the next collective among the survivors.
      CHECK(dvm.bench("barrier", "0", 2)["spans_us"].size() == 2);
    }
  }
}
