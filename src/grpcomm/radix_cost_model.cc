#include "grpcomm/radix_cost_model.h"

#include <algorithm>
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
  // A node sends one copy per child: never more than the other daemons (a
  // radix past N - 1 is a flat tree of N - 1 copies, not of `radix`).
  const double fanout =
      static_cast<double>(std::min<std::uint64_t>(radix, std::max<std::uint64_t>(1, daemons - 1)));
  const double copies_per_thread = std::ceil(fanout / static_cast<double>(constants.threads));
  const double wire_us = fanout * payload_bytes / constants.bandwidth_bytes_per_s * 1e6;
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
