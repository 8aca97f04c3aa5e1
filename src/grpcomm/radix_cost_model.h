// The seed's cost model for a store-and-forward broadcast over a radix-r tree:
//   T(r) = ceil(log_r N) * (alpha + ceil(r/t) * c + r * M / B)
// Software copies spread over t worker threads; wire copies share one NIC.
// Pure arithmetic: `grove model` prints it, tests pin it.
#pragma once

#include <cstdint>

namespace grove {

struct CostConstants {
  double alpha_us = 100.0;                // a hop's latency
  double copy_us = 25.0;                  // c: software cost of one forwarded copy
  std::uint32_t threads = 8;              // t: worker threads sharing the copies
  double bandwidth_bytes_per_s = 1.25e9;  // B: one link (10 GbE)
};

// ceil(log_r n) computed exactly in integers: the least d with r^d >= n.
// n <= 1 needs no hops (depth 0). radix must be >= 2.
std::uint32_t tree_depth(std::uint64_t daemons, std::uint64_t radix);

// T(r) in microseconds for `daemons` daemons and `payload_bytes` on the wire.
double release_time_us(std::uint64_t daemons, std::uint64_t radix, double payload_bytes,
                       const CostConstants& constants);

// The radix range the model searches: [2, N-1], clamped so it is never empty.
std::uint64_t max_model_radix(std::uint64_t daemons);

struct RadixChoice {
  std::uint64_t radix = 2;
  double time_us = 0.0;
};

// The radix minimising T over [2, max_model_radix(N)]; the smallest radix wins ties.
RadixChoice optimal_radix(std::uint64_t daemons, double payload_bytes,
                          const CostConstants& constants);

// M* = B * c / t: the payload where a copy's wire time equals its share of software time.
double crossover_bytes(const CostConstants& constants);

}  // namespace grove
