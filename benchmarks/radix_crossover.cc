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
#include "sim/simulator.h"

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

// The model's per-hop cost applied hop by hop on the tree as derived: the
// k-th child of a daemon holds the payload alpha + ceil(k/t) c + k M/B after
// its parent did; an acknowledgement costs alpha + c per hop back up. T(r) is
// this walk when every level is full and the last child is on the critical
// path, so the walk shows how much of a gap is the tree's shape.
double walked_span_us(std::uint32_t daemons, std::uint32_t radix, double frame_bytes,
                      const CostConstants& constants) {
  std::vector<Vpid> vpids(daemons);
  for (Vpid vpid = 0; vpid < daemons; ++vpid)
    vpids[vpid] = vpid;
  const Tree tree = Tree::derive(*Membership::create(vpids), radix);
  const double wire_us = frame_bytes / constants.bandwidth_bytes_per_s * 1e6;
  const double ack_us = constants.alpha_us + constants.copy_us;
  std::vector<double> held_us(daemons, 0.0);
  double span_us = 0;
  for (Vpid parent : tree.members()) {  // breadth first: a parent before its children
    const std::vector<Vpid> children = tree.children(parent);
    for (std::size_t index = 0; index < children.size(); ++index) {
      const double copies = static_cast<double>(index + 1);
      const Vpid child = children[index];
      held_us[child] = held_us[parent] + constants.alpha_us +
                       std::ceil(copies / constants.threads) * constants.copy_us + copies * wire_us;
      span_us = std::max(span_us, held_us[child] + *tree.depth(child) * ack_us);
    }
  }
  return span_us;
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
