// The control plane's liveness decisions in virtual time: a stalled daemon,
// a partition, a hung and a dead controller, each decided by the roster and
// the daemons' ControllerWatch as on real daemons (test/multinode/test_faults.cc
// makes the same faults land on real processes).
#include <catch2/catch.hpp>

#include "sim/control_plane_sim.h"

using namespace grove;

namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kS = 1'000 * kMs;
using Kind = ControlPlaneDecision::Kind;

std::string listing(const ControlPlaneSimResult& result) {
  std::string text;
  for (const auto& decision : result.decisions)
    text += describe(decision) + "\n";
  return text.empty() ? "(no decisions)" : text;
}

ControlPlaneSimOptions defaults(std::uint32_t daemons = 8) {
  ControlPlaneSimOptions options;
  options.daemons = daemons;
  options.duration_ns = 60 * kS;
  return options;
}

}  // namespace

TEST_CASE("without faults nobody is lost and nobody leaves", "[control_plane]") {
  auto result = run_control_plane_sim(defaults(32));
  INFO(listing(result));
  CHECK(result.decisions.empty());
  CHECK(std::count(result.states.begin(), result.states.end(), DaemonStateKind::up) == 32);
  CHECK(result.events > 32 * 100);  // two minutes of heartbeats did run
}

TEST_CASE("a daemon stopped past the heartbeat limit is lost, and leaves once it runs",
          "[control_plane]") {
  auto options = defaults();
  options.faults.stalls.push_back({3, 10 * kS, 20 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.decisions.size() == 2);
  const auto& lost = result.decisions[0];
  CHECK(lost.kind == Kind::lost);
  CHECK(lost.vpid == 3);
  CHECK(lost.reason == "daemon 3 (node3) lost: missed 10 heartbeats");
  // Last heard before 10 s; lost once 5 s (10 x 500 ms) of silence ended,
  // at the controller's next check.
  CHECK(lost.at_ns > 14'500 * kMs);
  CHECK(lost.at_ns < 15'600 * kMs);
  // SIGCONT: the eviction waiting in its socket makes it leave at once.
  const auto& left = result.decisions[1];
  CHECK(left.kind == Kind::left);
  CHECK(left.vpid == 3);
  CHECK(left.reason == "evicted: missed 10 heartbeats");
  CHECK(left.at_ns == 20 * kS);
  CHECK(result.states[3] == DaemonStateKind::failed);
  CHECK_FALSE(result.running[3]);
}

TEST_CASE("a daemon stopped for less than the limit is kept", "[control_plane]") {
  auto options = defaults();
  options.faults.stalls.push_back({3, 10 * kS, 13 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  CHECK(result.decisions.empty());
  CHECK(result.states[3] == DaemonStateKind::up);
}

TEST_CASE("a partition between two daemons costs the DVM one of them", "[control_plane]") {
  auto options = defaults();
  options.faults.partitions.push_back({2, 5, 10 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.decisions.size() == 2);
  const auto& lost = result.decisions[0];
  CHECK(lost.kind == Kind::lost);
  CHECK((lost.vpid == 2 || lost.vpid == 5));
  const Vpid survivor = lost.vpid == 2 ? 5 : 2;
  CHECK(lost.reason.find("daemon " + std::to_string(survivor) + " lost its link to it") !=
        std::string::npos);
  // Noticed after the link timeout.
  CHECK(lost.at_ns >= 11 * kS);
  CHECK(result.decisions[1].kind == Kind::left);
  CHECK(result.decisions[1].vpid == lost.vpid);
  CHECK(result.states[survivor] == DaemonStateKind::up);
  CHECK(std::count(result.states.begin(), result.states.end(), DaemonStateKind::up) == 7);
}

TEST_CASE("a hung controller is left by every daemon after its timeout", "[control_plane]") {
  auto options = defaults();
  options.faults.stalls.push_back({kControllerVpid, 10 * kS, kNever});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.decisions.size() == 7);
  for (const auto& decision : result.decisions) {
    CHECK(decision.kind == Kind::left);
    CHECK(decision.reason.find("the controller has not answered for") == 0);
    // Last answered just before 10 s; 30 s of silence, judged at a heartbeat.
    CHECK(decision.at_ns > 39'500 * kMs);
    CHECK(decision.at_ns < 40'600 * kMs);
  }
}

TEST_CASE("a dead controller is left at once", "[control_plane]") {
  auto options = defaults();
  options.faults.crashes.push_back({kControllerVpid, 10 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.decisions.size() == 7);
  for (const auto& decision : result.decisions) {
    CHECK(decision.kind == Kind::left);
    CHECK(decision.reason == "lost the controller");
    CHECK(decision.at_ns < 10 * kS + 1 * kMs);
  }
}

TEST_CASE("a controller stopped for a while holds nothing against its daemons", "[control_plane]") {
  // 8 s stopped: past the daemons' heartbeat limit (5 s), within their
  // patience with the controller (30 s).
  auto options = defaults();
  options.faults.stalls.push_back({kControllerVpid, 10 * kS, 18 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  CHECK(result.decisions.empty());
}

TEST_CASE("a daemon that dies is lost when its connection closes", "[control_plane]") {
  auto options = defaults();
  options.faults.crashes.push_back({4, 10 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.decisions.size() == 1);
  CHECK(result.decisions[0].vpid == 4);
  CHECK(result.decisions[0].reason ==
        "daemon 4 (node4) lost: its connection to the controller closed");
  CHECK(result.decisions[0].at_ns < 10 * kS + 1 * kMs);
}

TEST_CASE("a run is a function of its seed", "[control_plane]") {
  auto options = defaults();
  options.faults.partitions.push_back({1, 6, 5 * kS});
  options.faults.stalls.push_back({3, 10 * kS, 20 * kS});
  options.seed = 11;
  auto first = run_control_plane_sim(options);
  auto again = run_control_plane_sim(options);
  CHECK(first.decisions == again.decisions);
  CHECK(first.events == again.events);
  // Another seed moves the timings, not the verdicts.
  options.seed = 12;
  auto other = run_control_plane_sim(options);
  REQUIRE(other.decisions.size() == first.decisions.size());
  CHECK(other.decisions != first.decisions);
  for (std::size_t i = 0; i < first.decisions.size(); ++i)
    CHECK(other.decisions[i].kind == first.decisions[i].kind);
}
