// Benchmark (not a test): the simulator against the seed's cost model. One
// fence per run at the seed's constants with no jitter; the release span (the
// controller's started-to-completed census) on the release tree at radix 4
// against the routing tree at radix 64, next to the model's T(64)/T(4) and
// the model walked hop by hop over the derived trees. Times in microseconds.
// Only the controller contributes, so the release carries the payload and
// little else (with every daemon contributing, the per-contribution framing
// alone puts a 1024-daemon barrier past the crossover).
// Usage: bench_radix_crossover [RESULT.json]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "grpcomm/radix_cost_model.h"
#include "grpcomm/tags.h"
#include "rml/membership.h"
#include "rml/tree.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"
#include "sim/tree_walk.h"

using namespace grove;

namespace {

constexpr std::uint32_t kRoutingRadix = 64;
constexpr std::uint32_t kReleaseRadix = 4;

struct Measured {
  double span_us = 0;
  std::uint64_t frame_bytes = 0;  // one release data frame, header included
  std::uint64_t events = 0;
};

// The simulated network at the model's constants.
NetworkModel network_of(const CostConstants& constants) {
  NetworkModel network;
  network.alpha_ns = static_cast<TimeNs>(constants.alpha_us * 1000.0);
  network.copy_ns = static_cast<TimeNs>(constants.copy_us * 1000.0);
  network.threads = constants.threads;
  network.bandwidth_bytes_per_s = constants.bandwidth_bytes_per_s;
  network.jitter = 0.0;
  return network;
}

// One fence. A run that breaks an invariant is reported and ends the
// benchmark, since its span would mean nothing.
Measured measure(std::uint32_t daemons, std::uint64_t payload_bytes, bool low_radix_release,
                 const CostConstants& constants) {
  SimOptions options;
  options.daemons = daemons;
  options.payload_bytes = payload_bytes;
  options.radices = {kRoutingRadix, kReleaseRadix};
  options.low_radix_release = low_radix_release;
  options.participant_fraction = 0.0;  // the controller alone contributes
  options.network = network_of(constants);
  options.check_engines = false;
  options.trace_lines = 0;
  options.seed = 1;
  SimResult result = run_simulation(options);
  if (!result.ok || result.release_span_ns.size() != 1) {
    std::fprintf(stderr, "run failed: %s\nreplay: %s\n", result.violation.c_str(),
                 replay_command(options).c_str());
    std::exit(1);
  }
  TrafficCount data = result.traffic.of(FrameType::xcast_data, tags::fence_release);
  Measured measured;
  measured.span_us = static_cast<double>(result.release_span_ns.front()) / 1000.0;
  measured.frame_bytes = data.frames == 0 ? 0 : data.bytes / data.frames;
  measured.events = result.events;
  return measured;
}

}  // namespace

int main(int argc, char** argv) {
  const CostConstants constants;  // the seed's: alpha 100 us, c 25 us, t 8, 10 Gbit/s
  const std::uint64_t payloads[] = {100,    1'000,   4'000,     10'000,    20'000,
                                    40'000, 100'000, 1'000'000, 10'000'000};
  std::printf(
      "release span (us), radix %u (release tree) vs radix %u (routing tree); M* = %.0f B\n",
      kReleaseRadix, kRoutingRadix, crossover_bytes(constants));
  std::printf("%5s %9s %9s %10s %10s %10s %10s %7s %7s %7s %4s\n", "N", "payload", "frame_B",
              "sim_r4", "sim_r64", "model_r4", "model_r64", "sim_x", "model_x", "walk_x", "r*");
  nlohmann::json rows = nlohmann::json::array();
  for (std::uint32_t daemons : {64u, 1024u, 4096u}) {
    for (std::uint64_t payload : payloads) {
      Measured low = measure(daemons, payload, /*low_radix_release=*/true, constants);
      Measured high = measure(daemons, payload, /*low_radix_release=*/false, constants);
      // The model prices the bytes on the wire: the release frame as sent.
      const auto frame_bytes = static_cast<double>(low.frame_bytes);
      const double model_low = release_time_us(daemons, kReleaseRadix, frame_bytes, constants);
      const double model_high = release_time_us(daemons, kRoutingRadix, frame_bytes, constants);
      const double sim_ratio = high.span_us / low.span_us;
      const double model_ratio = model_high / model_low;
      const double walked_ratio = walked_span_us(daemons, kRoutingRadix, frame_bytes, constants) /
                                  walked_span_us(daemons, kReleaseRadix, frame_bytes, constants);
      const RadixChoice best = optimal_radix(daemons, frame_bytes, constants);
      std::printf("%5u %9llu %9llu %10.1f %10.1f %10.1f %10.1f %7.3f %7.3f %7.3f %4llu\n", daemons,
                  static_cast<unsigned long long>(payload),
                  static_cast<unsigned long long>(low.frame_bytes), low.span_us, high.span_us,
                  model_low, model_high, sim_ratio, model_ratio, walked_ratio,
                  static_cast<unsigned long long>(best.radix));
      rows.push_back({{"daemons", daemons},
                      {"payload_bytes", payload},
                      {"release_frame_bytes", low.frame_bytes},
                      {"sim_span_r4_us", low.span_us},
                      {"sim_span_r64_us", high.span_us},
                      {"model_r4_us", model_low},
                      {"model_r64_us", model_high},
                      {"sim_ratio_r64_over_r4", sim_ratio},
                      {"model_ratio_r64_over_r4", model_ratio},
                      {"sim_over_model_ratio", sim_ratio / model_ratio},
                      {"walked_ratio_r64_over_r4", walked_ratio},
                      {"model_optimal_radix", best.radix},
                      {"events_r4", low.events},
                      {"events_r64", high.events}});
    }
  }
  if (argc > 1) {
    nlohmann::json setup = {{"alpha_us", constants.alpha_us},
                            {"copy_us", constants.copy_us},
                            {"threads", constants.threads},
                            {"bandwidth_bytes_per_s", constants.bandwidth_bytes_per_s},
                            {"jitter", 0.0},
                            {"participant_fraction", 0.0},
                            {"crossover_bytes", crossover_bytes(constants)},
                            {"release_radix", kReleaseRadix},
                            {"routing_radix", kRoutingRadix}};
    std::ofstream(argv[1]) << nlohmann::json{{"benchmark", "radix_crossover"},
                                             {"setup", setup},
                                             {"results", rows}}
                                  .dump(2)
                           << "\n";
  }
  return 0;
}
