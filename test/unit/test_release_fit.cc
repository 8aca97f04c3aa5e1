// grove tune's fit: the constants that made the spans come back out, and
// what they advise.
#include <catch2/catch.hpp>

#include "grpcomm/release_fit.h"

using namespace grove;

namespace {
// The spans the model itself gives (one thread) for these constants.
ReleaseSpans modelled(std::uint64_t daemons, double small, double large, const CostConstants& k) {
  return {release_time_us(daemons, daemons, small, k), release_time_us(daemons, daemons, large, k),
          release_time_us(daemons, 2, small, k), release_time_us(daemons, 2, large, k)};
}
}  // namespace

TEST_CASE("the fit recovers alpha, c and B from flat and radix-2 spans", "[model]") {
  for (const std::uint64_t daemons : {4u, 9u, 16u, 100u}) {
    const CostConstants truth{80.0, 12.0, 1, 1.25e8};
    auto fit = fit_release_constants(daemons, 1024, 262144, modelled(daemons, 1024, 262144, truth));
    INFO(daemons << " daemons");
    REQUIRE(fit);
    CHECK(fit->constants.alpha_us == Approx(80.0));
    CHECK(fit->constants.copy_us == Approx(12.0));
    CHECK(fit->constants.bandwidth_bytes_per_s == Approx(1.25e8));
    CHECK(fit->constants.threads == 1);
    CHECK_FALSE(fit->alpha_clamped);
    CHECK_FALSE(fit->copy_clamped);
  }
}

TEST_CASE("the fit refuses what it cannot solve and clamps what noise made negative", "[model]") {
  const CostConstants truth{50.0, 10.0, 1, 1e9};
  auto three = fit_release_constants(3, 1024, 65536, modelled(3, 1024, 65536, truth));
  REQUIRE_FALSE(three);
  CHECK_THAT(three.error().message, Catch::Contains("same tree"));
  auto flat_payloads = fit_release_constants(8, 1024, 65536, ReleaseSpans{100, 100, 300, 300});
  REQUIRE_FALSE(flat_payloads);
  CHECK_THAT(flat_payloads.error().message, Catch::Contains("bandwidth is not resolved"));
  CHECK_FALSE(fit_release_constants(8, 4096, 1024, ReleaseSpans{1, 2, 3, 4}));
  // A radix-2 release slower per level than the flat tree's one level can
  // explain: c would be negative.
  auto noisy = fit_release_constants(8, 1024, 65536, ReleaseSpans{100, 200, 900, 1000});
  REQUIRE(noisy);
  CHECK(noisy->copy_clamped);
  CHECK(noisy->constants.copy_us == 0);
}

TEST_CASE("the advice weighs the best release radix against the routing tree", "[model]") {
  // Copies cheap, bytes dear: a small radix at 64 KiB on 100 daemons.
  const CostConstants wire_bound{50.0, 5.0, 1, 1.25e8};
  const ReleaseAdvice big = advise_release(100, 65536, wire_bound, 64, 4, true);
  CHECK(big.radix2 < 8);
  CHECK(big.low_radix_pays);
  CHECK(big.best_us < big.routing_us);
  CHECK(big.current_us == Approx(release_time_us(100, 4, 65536, wire_bound)));
  // Four daemons, copies dear: the flat tree (radix N), which the routing
  // tree already is, so a separate release tree does not pay.
  const CostConstants copy_bound{0.0, 40.0, 1, 1.4e9};
  const ReleaseAdvice small = advise_release(4, 34000, copy_bound, 64, 4, true);
  CHECK(small.radix2 == 4);
  CHECK(small.best_us == Approx(small.routing_us));
  CHECK_FALSE(small.low_radix_pays);
}
