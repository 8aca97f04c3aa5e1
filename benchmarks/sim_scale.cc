// Benchmark (not a test): how fast the simulator runs, in wall-clock time.
// (a) events per second over many seeded 257-daemon runs of 3 fences with 3
// random deaths, as the random-schedule sweep runs them (trace ring on) and
// with the trace ring off; (b) one 1 MB fence at 10,000 daemons with 3 random
// deaths, the median of 3 runs of the same seed. Wall-clock figures are
// printed and recorded, never asserted: they depend on the machine.
// Usage: bench_sim_scale [RESULT.json]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "sim/replay_line.h"
#include "sim/simulator.h"

using namespace grove;

namespace {

constexpr std::uint32_t kSweepSeeds = 300;
constexpr std::uint64_t kFirstSeed = 20261130;
constexpr int kLargeRuns = 3;
#ifdef NDEBUG
constexpr bool kAssertions = false;
#else
constexpr bool kAssertions = true;  // the default debugoptimized build keeps them
#endif

// The 1-minute load average, or -1 where /proc/loadavg is missing: wall-clock
// figures taken on a busy machine are recorded as such.
double load_average() {
  std::ifstream file("/proc/loadavg");
  double load = -1;
  file >> load;
  return file ? load : -1;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

SimOptions sweep_options(std::uint64_t seed, std::size_t trace_lines) {
  SimOptions options;
  options.daemons = 257;
  options.rounds = 3;
  options.random_faults = 3;
  options.payload_bytes = 1024;
  options.release_delay_ns = 150'000;  // lets a fault land while a release is held
  options.check_engines = true;
  options.validate_trees = false;
  options.trace_lines = trace_lines;
  options.seed = seed;
  return options;
}

nlohmann::json sweep(std::size_t trace_lines) {
  std::uint64_t events = 0;
  std::uint64_t failures = 0;
  std::uint64_t killed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (std::uint32_t i = 0; i < kSweepSeeds; ++i) {
    const SimOptions options = sweep_options(kFirstSeed + i, trace_lines);
    const SimResult result = run_simulation(options);
    events += result.events;
    killed += result.killed.size();
    if (!result.ok) {
      ++failures;
      std::printf("  run failed: %s\n  replay: %s\n", result.violation.c_str(),
                  replay_command(options).c_str());
    }
  }
  const double wall_s = seconds_since(start);
  const double per_s = static_cast<double>(events) / wall_s;
  std::printf(
      "257 daemons, 3 rounds, 3 faults, trace %3zu: %u runs, %llu events in %.3f s:"
      " %.0f events/s, %.2f ms/run, %llu failures\n",
      trace_lines, kSweepSeeds, static_cast<unsigned long long>(events), wall_s, per_s,
      wall_s * 1000.0 / kSweepSeeds, static_cast<unsigned long long>(failures));
  return {{"daemons", 257},
          {"rounds", 3},
          {"random_faults", 3},
          {"payload_bytes", 1024},
          {"release_delay_us", 150},
          {"trace_lines", trace_lines},
          {"check_engines", true},
          {"runs", kSweepSeeds},
          {"first_seed", kFirstSeed},
          {"events", events},
          {"deaths", killed},
          {"failures", failures},
          {"wall_s", wall_s},
          {"events_per_s", per_s},
          {"ms_per_run", wall_s * 1000.0 / kSweepSeeds}};
}

nlohmann::json large_fence() {
  SimOptions options;
  options.daemons = 10'000;
  options.payload_bytes = 1'000'000;
  options.random_faults = 3;
  options.check_engines = true;
  options.validate_trees = false;
  options.trace_lines = 0;
  options.network.jitter = 0.5;
  options.seed = 1;
  std::vector<double> walls_s;
  SimResult result;
  for (int i = 0; i < kLargeRuns; ++i) {
    const auto start = std::chrono::steady_clock::now();
    result = run_simulation(options);
    walls_s.push_back(seconds_since(start));
  }
  std::vector<double> sorted = walls_s;
  std::sort(sorted.begin(), sorted.end());
  const double median_s = sorted[sorted.size() / 2];
  std::printf(
      "10000 daemons, one 1 MB fence, 3 random faults: median %.3f s of %d runs"
      " (%.3f .. %.3f), %llu events, %zu killed, %s\n",
      median_s, kLargeRuns, sorted.front(), sorted.back(),
      static_cast<unsigned long long>(result.events), result.killed.size(),
      result.ok ? "invariants held" : result.violation.c_str());
  return {{"daemons", options.daemons},
          {"payload_bytes", options.payload_bytes},
          {"random_faults", options.random_faults},
          {"check_engines", options.check_engines},
          {"validate_trees", options.validate_trees},
          {"trace_lines", options.trace_lines},
          {"jitter", options.network.jitter},
          {"seed", options.seed},
          {"ok", result.ok},
          {"events", result.events},
          {"killed", result.killed},
          {"rounds_failed", result.rounds_failed},
          {"wall_s", walls_s},
          {"median_wall_s", median_s},
          {"target_s", 1.0}};
}

}  // namespace

int main(int argc, char** argv) {
  const double load_before = load_average();
  std::printf("hardware threads: %u (the simulator runs on one); load average %.2f\n",
              std::thread::hardware_concurrency(), load_before);
  nlohmann::json sweeps = nlohmann::json::array();
  sweeps.push_back(sweep(/*trace_lines=*/80));
  sweeps.push_back(sweep(/*trace_lines=*/0));
  nlohmann::json large = large_fence();
  if (argc > 1) {
    std::ofstream(argv[1]) << nlohmann::json{{"benchmark", "sim_scale"},
                                             {"hardware_threads",
                                              std::thread::hardware_concurrency()},
                                             {"load_average_before", load_before},
                                             {"load_average_after", load_average()},
                                             {"assertions", kAssertions},
                                             {"sweep", sweeps},
                                             {"large_fence", large}}
                                  .dump(2)
                           << "\n";
  }
  return 0;
}
