// Perturbing a real history (sim/flight_perturb.h): a recorded history is
// kept up to a consistent cut and the simulator's jitter and a death take
// over; nothing breaks for correct engines, the frames in flight at the cut
// are delivered, and a weakened repair rule is found by the search.
#include <catch2/catch.hpp>

#include "grpcomm/flight_recorder.h"
#include "grpcomm/tags.h"
#include "local_cluster.h"
#include "sim/flight_perturb.h"

using namespace grove;
using grove::test::LocalCluster;

namespace {

constexpr std::uint32_t kDaemons = 12;

EngineConfig config() {
  EngineConfig c;
  c.radices = {4, 2};  // deep trees: relays with children
  c.ack_delay_ns = 50'000;
  return c;
}

// Fences with data and releases, one after another, no fault: the history
// a healthy DVM records.
std::vector<FlightRecording> healthy_history(FenceTopology fences = FenceTopology::tree) {
  EngineConfig base = config();
  base.fence_topology = fences;
  LocalCluster cluster(kDaemons, base);
  cluster.record_flights(4 << 20);
  const VpidSet everyone = VpidSet::span(0, kDaemons - 1);
  for (int round = 0; round < 6; ++round) {
    for (Vpid vpid = 0; vpid < kDaemons; ++vpid)
      cluster.contribute(vpid, FenceRequest{"job", everyone, Bytes(40 + vpid, std::byte{1})});
    cluster.run();
    cluster.release(tags::bench_release, Bytes(300, std::byte(round)));
    cluster.settle();
  }
  std::vector<FlightRecording> out;
  for (Vpid vpid = 0; vpid < kDaemons; ++vpid) {
    auto recording = decode_flight_file(cluster.flight(vpid));
    REQUIRE(recording);
    out.push_back(std::move(*recording));
  }
  return out;
}

}  // namespace

TEST_CASE("a healthy history perturbed at any cut, with jitter and a death, breaks nothing",
          "[flight][perturb]") {
  const std::vector<FlightRecording> history = healthy_history();
  std::uint64_t in_flight = 0;
  for (double cut : {0.0, 0.2, 0.45, 0.7, 1.0}) {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      PerturbOptions options;
      options.seed = seed;
      options.cut = cut;
      options.kills = seed % 3 == 0 ? 0 : 1;
      auto report = perturb_flights(history, options);
      REQUIRE(report);
      INFO("cut " << cut << " seed " << seed);
      for (const std::string& line : describe_perturb(*report))
        INFO(line);
      CHECK(report->ok());
      CHECK(report->killed.size() == options.kills);
      if (!report->killed.empty()) CHECK(report->killed[0] != kControllerVpid);
      CHECK(report->kept.size() == kDaemons);
      in_flight += report->in_flight;
      if (cut == 0.0) CHECK(report->kept.at(kControllerVpid) <= 1);
      if (cut == 1.0) CHECK(report->kept.at(kControllerVpid) == history[0].inputs.size());
    }
  }
  // Cuts in the middle of fences: frames were in flight and were delivered.
  CHECK(in_flight > 0);
}

TEST_CASE("a Bruck DVM's history perturbed with deaths breaks nothing",
          "[flight][perturb][bruck]") {
  const std::vector<FlightRecording> history = healthy_history(FenceTopology::bruck);
  for (double cut : {0.1, 0.5, 0.9}) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      PerturbOptions options;
      options.seed = seed;
      options.cut = cut;
      options.kills = seed % 2;
      auto report = perturb_flights(history, options);
      REQUIRE(report);
      INFO("cut " << cut << " seed " << seed);
      for (const std::string& line : describe_perturb(*report))
        INFO(line);
      CHECK(report->ok());
    }
  }
}

TEST_CASE("one seed perturbs one way: the same seed gives the same run", "[flight][perturb]") {
  const std::vector<FlightRecording> history = healthy_history();
  PerturbOptions options;
  options.seed = 7;
  options.cut = 0.45;
  auto first = perturb_flights(history, options);
  auto second = perturb_flights(history, options);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->killed == second->killed);
  CHECK(first->simulated_inputs == second->simulated_inputs);
  CHECK(first->in_flight == second->in_flight);
}

TEST_CASE("the search finds a weakened repair rule a healthy history never exercised",
          "[flight][perturb]") {
  const std::vector<FlightRecording> history = healthy_history();
  // The history replays exactly under the weakened rule (no death in it);
  // only the perturbation's deaths make the rule matter.
  std::uint64_t failed = 0;
  for (std::uint64_t seed = 1; seed <= 60 && failed == 0; ++seed) {
    PerturbOptions options;
    options.seed = seed;
    options.cut = 0.3;
    options.jitter_ns = 2'000'000;
    options.weakened.add(RepairRule::accept_any_sender);
    auto report = perturb_flights(history, options);
    REQUIRE(report);
    if (!report->ok()) failed = seed;
  }
  CHECK(failed > 0);
}

TEST_CASE("a perturbation refuses what it cannot start from", "[flight][perturb]") {
  std::vector<FlightRecording> history = healthy_history();
  PerturbOptions options;
  options.cut = 1.5;
  auto bad_cut = perturb_flights(history, options);
  REQUIRE_FALSE(bad_cut);
  CHECK_THAT(bad_cut.error().message, Catch::Contains("--cut"));
  // Without the controller's recording.
  std::vector<FlightRecording> no_controller(history.begin() + 1, history.end());
  auto refused = perturb_flights(no_controller, PerturbOptions{});
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("controller"));
  // A daemon missing that was never declared lost: its part is unknown.
  std::vector<FlightRecording> missing = history;
  missing.erase(missing.begin() + 3);
  auto unknown = perturb_flights(missing, PerturbOptions{});
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message, Catch::Contains("daemon 3 has no recording"));
}
