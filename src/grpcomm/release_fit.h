// The cost model's constants (radix_cost_model.h, one worker thread) fitted
// to releases measured on one DVM's hosts: a flat tree (one level, N - 1
// copies) and a radix-2 tree (ceil(log2 N) levels of 2 copies), each at a
// small and a large payload. The per-byte cost comes from how the spans
// grow with the payload, alpha and c from the two trees at the small one:
//   flat:     T = alpha + (N-1) c + (N-1) M / B
//   radix 2:  T = d (alpha + 2 c + 2 M / B),  d = ceil(log2 N)
// Pure arithmetic: `grove tune` measures, this solves, tests pin it.
#pragma once

#include <cstdint>
#include <string>

#include "grpcomm/radix_cost_model.h"
#include "util/result.h"

namespace grove {

// Median spans (microseconds) of the four measured cases.
struct ReleaseSpans {
  double flat_small_us = 0, flat_large_us = 0;
  double binary_small_us = 0, binary_large_us = 0;
};

struct FittedConstants {
  CostConstants constants;  // threads = 1
  // What the measurement could not pin and was clamped to 0 (a negative
  // alpha or c: noise larger than the term), for the user to be told.
  bool alpha_clamped = false, copy_clamped = false;
};

// Needs N >= 4 (with three daemons both trees are the same) and
// small < large; an Error says why a fit is impossible (the spans did not
// grow with the payload: B unresolved).
Result<FittedConstants> fit_release_constants(std::uint64_t daemons, double small_bytes,
                                              double large_bytes, const ReleaseSpans& spans);

// What to set for a modex of `payload_bytes` on N daemons: the best release
// radix by the model (N for the flat tree), its predicted span beside the routing tree's (the
// release without grpcomm_low_radix_release) and the DVM's present setting.
struct ReleaseAdvice {
  std::uint64_t radix2 = 2;
  double best_us = 0;           // at radix2
  double routing_us = 0;        // at the routing radix (low-radix release off)
  double current_us = 0;        // as the DVM runs now
  bool low_radix_pays = false;  // best beats the routing tree by 5% or more
};
ReleaseAdvice advise_release(std::uint64_t daemons, double payload_bytes,
                             const CostConstants& constants, std::uint64_t routing_radix,
                             std::uint64_t current_radix2, bool current_low_radix);

}  // namespace grove
