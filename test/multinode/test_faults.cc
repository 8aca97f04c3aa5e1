// A relay of the release tree killed while it holds a release: every surviving
// daemon is released with identical bytes, nothing hangs, the DVM goes on.
#include <catch2/catch.hpp>

#include <signal.h>

#include <regex>
#include <set>
#include <thread>

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

TEST_CASE("killing each relay mid-release: every survivor gets identical bytes", "[dvm][faults]") {
  constexpr int kDaemons = 10;
  for (int radix2 : {2, 4}) {
    for (int victim = 1; victim < kDaemons; ++victim) {
      INFO("radix2 " << radix2 << " victim " << victim);
      Dvm dvm(kDaemons, {"--mca", "rml_base_radix2", std::to_string(radix2), "--mca",
                         "grpcomm_release_delay_ms", "1500", "--mca",
                         "grpcomm_release_delay_target", std::to_string(victim), "--mca",
                         "grpcomm_base_verbose", "1", "--mca", "daemon_heartbeat_ms", "0"});
      REQUIRE(dvm.ready());
      auto status = dvm.status();
      int victim_pid = status["daemons"][victim]["pid"].get<int>();
      // Kill the victim as soon as it has the release (and holds it).
      std::regex delivered("groved vpid " + std::to_string(victim) +
                           " [^\\n]*bench-release \\w+ op 1:");
      std::thread killer([&] {
        dvm.controller().wait_for_match(delivered, std::chrono::seconds(20));
        kill(victim_pid, SIGKILL);
      });
      auto bench = dvm.bench("release", "10KB", 1);
      killer.join();
      CHECK(bench["spans_us"].size() == 1);
      // The bench call returned: nothing hung. Every survivor logged the same release.
      auto releases = releases_in(dvm.controller().err(), 1);
      std::set<std::string> digests;
      for (int vpid = 0; vpid < kDaemons; ++vpid) {
        if (vpid == victim) continue;
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
