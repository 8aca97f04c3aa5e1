// The simulator with membership that moves both ways (grove sim --returns
// --joins): daemons that die come back at their vpid and newcomers join past
// the end while fences run, and every invariant holds, with the joiners and
// returners held to them (I3 in their current life; every daemon knows every
// signature's last round).
#include <catch2/catch.hpp>

#include "sim/replay_line.h"
#include "sim/simulator.h"

using namespace grove;

namespace {

SimOptions elastic(std::uint32_t daemons, std::uint32_t faults, std::uint32_t returns,
                   std::uint32_t joins) {
  SimOptions options;
  options.daemons = daemons;
  options.radices = {3, 2};
  options.payload_bytes = 5000;
  options.rounds = 5;
  options.random_faults = faults;
  options.returns = returns;
  options.joins = joins;
  options.network.jitter = 5;
  options.trace_lines = 40;
  return options;
}

std::string why(const SimResult& result, const SimOptions& options) {
  std::string text = result.violation + "\nreplay: " + replay_command(options) + "\n";
  for (const auto& line : result.trace)
    text += "  " + line + "\n";
  return text;
}

}  // namespace

TEST_CASE("joins while fences run: every round completes and reaches every joiner",
          "[sim][elastic]") {
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SimOptions options = elastic(17, 0, 0, 4);
    options.seed = seed;
    SimResult result = run_simulation(options);
    INFO(why(result, options));
    REQUIRE(result.ok);
    CHECK(result.joined == std::vector<std::uint32_t>{17, 18, 19, 20});
    // No participant was lost, so every round completed at all of them.
    CHECK(result.rounds_completed == options.rounds);
    CHECK(result.rounds_failed == 0);
    CHECK(result.per_daemon.size() == 21);
  }
}

TEST_CASE("daemons that die come back at their vpid; their jobs' rounds end, others go on",
          "[sim][elastic]") {
  std::uint64_t returned = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    SimOptions options = elastic(17, 3, 3, 2);
    options.seed = seed;
    options.participant_fraction = 0.5;
    SimResult result = run_simulation(options);
    INFO(why(result, options));
    REQUIRE(result.ok);
    // Every death is detected, and each victim comes back once.
    CHECK(result.returned.size() == result.killed.size());
    returned += result.returned.size();
  }
  CHECK(returned > 40);  // a death on a release that never comes does not happen
}

TEST_CASE("returns and joins are part of a run's replay line", "[sim][elastic][replay]") {
  SimOptions options = elastic(9, 2, 1, 3);
  options.seed = 77;
  auto parsed = parse_replay_arguments(replay_command(options));
  REQUIRE(parsed);
  CHECK(parsed->returns == 1);
  CHECK(parsed->joins == 3);
  const SimResult first = run_simulation(options);
  const SimResult again = run_simulation(*parsed);
  CHECK(first.ok);
  CHECK(first.events == again.events);
  CHECK(first.joined == again.joined);
  CHECK(first.returned == again.returned);
}
