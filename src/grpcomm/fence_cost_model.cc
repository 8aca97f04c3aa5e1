#include "grpcomm/fence_cost_model.h"

#include "rml/bruck_schedule.h"

namespace grove {

FenceCostLine tree_fence_cost(std::uint64_t daemons, std::uint64_t routing, std::uint64_t release,
                              const CostConstants& constants) {
  const double bandwidth = constants.bandwidth_bytes_per_s / 1e6;  // bytes per microsecond
  const double up_hops = tree_depth(daemons, routing);
  // The release is T(r2): its latency at M = 0, and its slope.
  const double release_latency = release_time_us(daemons, release, 0, constants);
  const double release_slope = release_time_us(daemons, release, 1, constants) - release_latency;
  return FenceCostLine{up_hops * (constants.alpha_us + constants.copy_us) + release_latency,
                       1.0 / bandwidth + release_slope};
}

FenceCostLine bruck_fence_cost(std::uint64_t daemons, const CostConstants& constants) {
  const double bandwidth = constants.bandwidth_bytes_per_s / 1e6;
  const double rounds = bruck::rounds(daemons);
  // Every member sends P - 1 blocks of D / P over the exchange.
  const double share = daemons > 0 ? static_cast<double>(bruck::blocks_per_member(daemons)) /
                                         static_cast<double>(daemons)
                                   : 0;
  return FenceCostLine{rounds * (constants.alpha_us + constants.copy_us), share / bandwidth};
}

std::optional<double> wins_from(const FenceCostLine& challenger, const FenceCostLine& incumbent) {
  if (challenger.per_byte_us >= incumbent.per_byte_us) {
    // Never cheaper per byte: it wins from the start or not from any size on.
    const bool never_worse = challenger.latency_us <= incumbent.latency_us &&
                             challenger.per_byte_us == incumbent.per_byte_us;
    return never_worse ? std::optional<double>(0.0) : std::nullopt;
  }
  if (challenger.latency_us <= incumbent.latency_us) return 0.0;
  return (challenger.latency_us - incumbent.latency_us) /
         (incumbent.per_byte_us - challenger.per_byte_us);
}

}  // namespace grove
