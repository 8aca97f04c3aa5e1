// Thousands of seeded fault schedules through the simulator, every invariant
// checked on every step and liveness at the end. A failure prints the command
// line that replays it bit for bit.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/campaign.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"

using namespace grove;

namespace {

std::uint64_t base_seed() {
  // GROVE_SIM_SEED picks a different (still reproducible) slice of schedules.
  const char* text = std::getenv("GROVE_SIM_SEED");
  return text != nullptr ? std::strtoull(text, nullptr, 10) : 20261130;
}

// Runs every combination of radices, faults and workload shape for one daemon
// count; returns the number of runs.
std::size_t sweep(std::uint32_t daemons, std::uint32_t seeds_per_cell) {
  const std::uint32_t radices[] = {2, 4, 64};
  std::size_t runs = 0;
  std::uint64_t seed = base_seed() + daemons * 1000003ULL;
  for (std::uint32_t radix : radices) {
    for (std::uint32_t radix2 : radices) {
      for (std::uint32_t faults = 0; faults <= 3; ++faults) {
        for (std::uint32_t i = 0; i < seeds_per_cell; ++i) {
          SimOptions options;
          options.daemons = daemons;
          options.radices = {radix, radix2};
          options.low_radix_release = (i % 5) != 4;
          options.random_faults = faults;
          options.rounds = 1 + i % 3;
          options.payload_bytes = (i % 4 == 0) ? 40000 : 256;
          options.release_delay_ns = (i % 2 == 0) ? 150'000 : 0;
          // Every other delayed run holds only at the first victim, so its
          // orphaned subtree is the last to finish.
          options.release_delay_target = (i % 4 == 0) ? -2 : -1;
          options.network.jitter = (i % 3 == 1) ? 0.0 : 1.0;
          options.participant_fraction = (i % 3 == 0) ? 0.4 : 1.0;
          options.check_engines = true;
          options.validate_trees = daemons <= 64;
          options.seed = seed++;
          SimResult result = run_simulation(options);
          ++runs;
          if (!result.ok) {
            std::ostringstream trace;
            for (const auto& line : result.trace)
              trace << "  " << line << "\n";
            FAIL(result.violation << "\nreplay: " << replay_command(options) << "\n"
                                  << trace.str());
          }
        }
      }
    }
  }
  return runs;
}

}  // namespace

// 3 counts x 9 radix pairs x 4 fault counts x seeds = 20,520 schedules.
TEST_CASE("random fault schedules at 10 daemons", "[sim][schedules]") {
  CHECK(sweep(10, 190) == 6840);
}
TEST_CASE("random fault schedules at 64 daemons", "[sim][schedules]") {
  CHECK(sweep(64, 190) == 6840);
}
TEST_CASE("random fault schedules at 257 daemons", "[sim][schedules]") {
  CHECK(sweep(257, 190) == 6840);
}

TEST_CASE("regression seeds replay clean", "[sim][replay]") {
  std::ifstream file(GROVE_SIM_REGRESSION_SEEDS);
  REQUIRE(file);
  std::string line;
  std::size_t replayed = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    INFO(line);
    auto options = parse_replay_arguments(line);
    REQUIRE(options.ok());
    options->validate_trees = options->daemons <= 64;
    SimResult result = run_simulation(*options);
    INFO(result.violation);
    CHECK(result.ok);
    ++replayed;
  }
  CHECK(replayed >= 7);
}

TEST_CASE("a printed replay line reproduces the run exactly", "[sim][replay]") {
  SimOptions options;
  options.daemons = 33;
  options.radices = {3, 2};
  options.random_faults = 4;
  options.rounds = 3;
  options.payload_bytes = 9000;
  options.release_delay_ns = 120'000;
  options.release_delay_target = -2;
  options.participant_fraction = 0.7;
  options.network = NetworkModel{37'500, 11'250, 3, 2.5e8, 3.25};
  options.compress_threshold = 2048;
  options.seed = 424242;
  auto parsed = parse_replay_arguments(replay_command(options));
  REQUIRE(parsed.ok());
  CHECK(replay_arguments(*parsed) == replay_arguments(options));
  SimResult first = run_simulation(options);
  SimResult again = run_simulation(*parsed);
  CHECK(first.events == again.events);
  CHECK(first.end_ns == again.end_ns);
  CHECK(first.killed == again.killed);
  CHECK(first.traffic.total().frames == again.traffic.total().frames);
  CHECK(first.traffic.total().bytes == again.traffic.total().bytes);
  CHECK(first.fence_ns == again.fence_ns);
}

TEST_CASE("a replay line with an unknown option or a bad value is refused by name",
          "[sim][replay]") {
  auto unknown = parse_replay_arguments("--daemons 8 --radixx 2");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("--radixx") != std::string::npos);
  auto bad = parse_replay_arguments("--daemons 8 --jitter lots");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("--jitter lots") != std::string::npos);
  auto missing = parse_replay_arguments("--daemons");
  CHECK_FALSE(missing.ok());
}

// The campaign's matrix (benchmarks/sim_campaign runs a million of these):
// radices 2-8 and 64/4, 5-300 daemons, faults up to half, jitter up to 10x
// alpha, 1-5 rounds, participation 0.1-1, delays on a victim, returns and
// joins in half of them. A fixed sample,
// three schedules per cell, from the campaign's own seed.
TEST_CASE("a fixed sample of the campaign matrix holds every invariant", "[sim][campaign]") {
  CampaignReport report;
  const std::uint64_t count = campaign_cells().size() * 3;
  for (std::uint64_t index = 0; index < count; ++index)
    run_campaign_schedule(20261130, index, report);
  for (const auto& violation : report.violations) {
    std::ostringstream trace;
    for (const auto& line : violation.trace)
      trace << "  " << line << "\n";
    FAIL(violation.violation << "\nreplay: " << violation.replay << "\n" << trace.str());
  }
  CHECK(report.schedules == count);
  CHECK(report.deaths > count);  // three quarters of the cells have faults
  // Half the schedules move membership both ways.
  CHECK(report.returns > count / 8);
  CHECK(report.joins > count / 4);
}
