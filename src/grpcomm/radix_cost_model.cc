#include "grpcomm/radix_cost_model.h"

#include <cassert>
#include <cmath>

namespace grove {

std::uint32_t tree_depth(std::uint64_t daemons, std::uint64_t radix) {
  assert(radix >= 2);
  std::uint32_t depth = 0;
  std::uint64_t reach = 1;  // daemons covered by a tree of this depth: radix^depth
  while (reach < daemons) {
    ++depth;
    if (reach > daemons / radix) break;  // the next power passes daemons: stop before overflow
    reach *= radix;
  }
  return depth;
}

double release_time_us(std::uint64_t daemons, std::uint64_t radix, double payload_bytes,
                       const CostConstants& constants) {
  const double depth = tree_depth(daemons, radix);
  const double copies_per_thread =
      std::ceil(static_cast<double>(radix) / static_cast<double>(constants.threads));
  const double wire_us =
      static_cast<double>(radix) * payload_bytes / constants.bandwidth_bytes_per_s * 1e6;
  return depth * (constants.alpha_us + copies_per_thread * constants.copy_us + wire_us);
}

std::uint64_t max_model_radix(std::uint64_t daemons) {
  return daemons > 3 ? daemons - 1 : 2;
}

RadixChoice optimal_radix(std::uint64_t daemons, double payload_bytes,
                          const CostConstants& constants) {
  RadixChoice best{2, release_time_us(daemons, 2, payload_bytes, constants)};
  const std::uint64_t last = max_model_radix(daemons);
  for (std::uint64_t radix = 3; radix <= last; ++radix) {
    double time_us = release_time_us(daemons, radix, payload_bytes, constants);
    // Strictly better by more than rounding noise: equal costs keep the smaller radix.
    if (time_us < best.time_us * (1.0 - 1e-12)) best = RadixChoice{radix, time_us};
  }
  return best;
}

double crossover_bytes(const CostConstants& constants) {
  return constants.bandwidth_bytes_per_s * constants.copy_us * 1e-6 /
         static_cast<double>(constants.threads);
}

}  // namespace grove
