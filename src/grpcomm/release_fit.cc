#include "grpcomm/release_fit.h"

#include <algorithm>

namespace grove {

Result<FittedConstants> fit_release_constants(std::uint64_t daemons, double small_bytes,
                                              double large_bytes, const ReleaseSpans& spans) {
  if (daemons < 4) {
    return Error{"a fit needs 4 daemons or more: with " + std::to_string(daemons) +
                 " a flat and a radix-2 release are the same tree"};
  }
  if (!(small_bytes >= 0 && large_bytes > small_bytes)) {
    return Error{"the large payload must be larger than the small one"};
  }
  const double fanout = static_cast<double>(daemons - 1);
  const double depth = tree_depth(daemons, 2);
  // Seconds per byte of one copy, pooled over both trees' growth (the flat
  // tree sends N - 1 copies of each byte from one node, radix 2 sends 2 per
  // level over d levels).
  const double grown =
      (spans.flat_large_us - spans.flat_small_us) + (spans.binary_large_us - spans.binary_small_us);
  const double copies = fanout + 2 * depth;
  const double us_per_byte = grown / (copies * (large_bytes - small_bytes));
  if (!(us_per_byte > 0)) {
    return Error{
        "the releases did not take longer with the larger payload: the bandwidth is not "
        "resolved (a larger --large, or more --count)"};
  }
  // At the small payload, without its bytes: F = alpha + (N-1) c and
  // R = alpha + 2 c.
  const double flat = spans.flat_small_us - fanout * small_bytes * us_per_byte;
  const double binary = spans.binary_small_us / depth - 2 * small_bytes * us_per_byte;
  FittedConstants fit;
  double copy = (flat - binary) / (fanout - 2);
  if (copy < 0) {
    copy = 0;
    fit.copy_clamped = true;
  }
  double alpha = binary - 2 * copy;
  if (alpha < 0) {
    alpha = 0;
    fit.alpha_clamped = true;
  }
  fit.constants.alpha_us = alpha;
  fit.constants.copy_us = copy;
  fit.constants.threads = 1;
  fit.constants.bandwidth_bytes_per_s = 1e6 / us_per_byte;
  return fit;
}

ReleaseAdvice advise_release(std::uint64_t daemons, double payload_bytes,
                             const CostConstants& constants, std::uint64_t routing_radix,
                             std::uint64_t current_radix2, bool current_low_radix) {
  ReleaseAdvice advice;
  const RadixChoice best = optimal_radix(daemons, payload_bytes, constants);
  advice.radix2 = best.radix;
  advice.best_us = best.time_us;
  // The model's search stops at N - 1, whose depth it counts as 2; the
  // flat tree (one level of N - 1 copies) is a release tree too.
  if (const double flat = release_time_us(daemons, daemons, payload_bytes, constants);
      flat < advice.best_us) {
    advice.radix2 = daemons;
    advice.best_us = flat;
  }
  advice.routing_us = release_time_us(daemons, routing_radix, payload_bytes, constants);
  advice.current_us = release_time_us(daemons, current_low_radix ? current_radix2 : routing_radix,
                                      payload_bytes, constants);
  advice.low_radix_pays = advice.best_us <= 0.95 * advice.routing_us;
  return advice;
}

}  // namespace grove
