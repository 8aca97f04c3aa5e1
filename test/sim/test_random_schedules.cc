// Thousands of seeded fault schedules through the simulator, every invariant
// checked on every step and liveness at the end. A failure prints the command
// line that replays it bit for bit.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

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
TEST_CASE("random fault schedules at 10 daemons", "[sim]") {
  CHECK(sweep(10, 190) == 6840);
}
TEST_CASE("random fault schedules at 64 daemons", "[sim]") {
  CHECK(sweep(64, 190) == 6840);
}
TEST_CASE("random fault schedules at 257 daemons", "[sim]") {
  CHECK(sweep(257, 190) == 6840);
}

TEST_CASE("regression seeds replay clean", "[sim]") {
  std::ifstream file(GROVE_SIM_REGRESSION_SEEDS);
  REQUIRE(file);
  std::string line;
  std::size_t replayed = 0;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    SimOptions options;
    int low = 1;
    fields >> options.daemons >> options.radices.routing >> options.radices.release >> low >>
        options.random_faults >> options.rounds >> options.payload_bytes >>
        options.release_delay_ns >> options.seed;
    REQUIRE(fields);
    options.low_radix_release = low != 0;
    options.validate_trees = options.daemons <= 64;
    SimResult result = run_simulation(options);
    INFO(line);
    CHECK(result.ok);
    CHECK(result.violation.empty());
    ++replayed;
  }
  CHECK(replayed > 0);
}
