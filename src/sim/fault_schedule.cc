#include "sim/fault_schedule.h"

#include <algorithm>

#include "grpcomm/radix_cost_model.h"

namespace grove {

TimeNs fault_horizon_ns(const SimOptions& options) {
  CostConstants model{static_cast<double>(options.network.alpha_ns) / 1000.0,
                      static_cast<double>(options.network.copy_ns) / 1000.0,
                      options.network.threads, options.network.bandwidth_bytes_per_s};
  double round_us = release_time_us(options.daemons, options.radices.routing, 64, model) +
                    release_time_us(options.daemons, options.radices.release,
                                    static_cast<double>(options.payload_bytes), model) +
                    static_cast<double>(options.release_delay_ns) / 1000.0 * 4;
  return static_cast<TimeNs>(round_us * 1000.0 * options.rounds * 1.5) + 1;
}

std::vector<FaultSpec> draw_faults(const SimOptions& options, RandomStream& faults) {
  std::vector<FaultSpec> drawn;
  if (options.random_faults == 0 || options.daemons <= 2) return drawn;
  // Spread random deaths over the time the rounds should take, by the model.
  const TimeNs horizon = fault_horizon_ns(options);
  std::vector<Vpid> candidates;
  for (Vpid i = 1; i < options.daemons; ++i)
    candidates.push_back(i);
  faults.shuffle(candidates);
  std::uint32_t count =
      std::min<std::uint32_t>(options.random_faults, static_cast<std::uint32_t>(candidates.size()));
  for (std::uint32_t i = 0; i < count; ++i) {
    FaultSpec fault;
    fault.victim = candidates[i];
    // A Bruck fence has no release to hold: its third kind needs no delay.
    const std::uint64_t kinds =
        options.release_delay_ns > 0 || options.fence_topology == FenceTopology::bruck ? 3 : 2;
    fault.kind = static_cast<FaultKind>(faults.below(kinds));
    fault.at_ns = faults.uniform(0, horizon);
    fault.round = faults.uniform(1, options.rounds);
    drawn.push_back(fault);
  }
  return drawn;
}

}  // namespace grove
