#include <catch2/catch.hpp>

#include "grpcomm/radix_cost_model.h"

using namespace grove;

TEST_CASE("tree depth is the exact integer ceil(log_r N)", "[model]") {
  CHECK(tree_depth(1, 2) == 0);
  CHECK(tree_depth(2, 2) == 1);
  CHECK(tree_depth(128, 12) == 2);  // 12^2 = 144
  CHECK(tree_depth(144, 12) == 2);
  CHECK(tree_depth(145, 12) == 3);
  CHECK(tree_depth(1024, 32) == 2);  // exact power
  CHECK(tree_depth(1025, 32) == 3);
  CHECK(tree_depth(10000, 64) == 3);
  CHECK(tree_depth(UINT64_MAX, 2) == 64);
  // Brute force against repeated multiplication in wide arithmetic.
  for (std::uint64_t n = 1; n <= 300; ++n) {
    for (std::uint64_t r = 2; r <= 70; ++r) {
      std::uint32_t d = 0;
      unsigned __int128 reach = 1;
      while (reach < n) {
        reach *= r;
        ++d;
      }
      REQUIRE(tree_depth(n, r) == d);
    }
  }
}

TEST_CASE("the crossover at the seed's constants is 3.9 KB", "[model]") {
  CostConstants seed;
  CHECK(crossover_bytes(seed) == Approx(3906.25));
}

TEST_CASE("optimal radices at the seed's constants (pinned from this implementation)", "[model]") {
  CostConstants seed;
  struct Row {
    double payload;
    std::uint64_t radix[3];  // N = 128, 1024, 10000
  };
  // These are what the formula gives exactly; docs/cost-model.md compares them
  // with the seed's printed table.
  const Row rows[] = {
      {33, {12, 32, 22}}, {10e3, {12, 6, 7}}, {100e3, {4, 4, 4}},
      {10e6, {2, 4, 3}},  {256e6, {2, 4, 3}},
  };
  const std::uint64_t columns[] = {128, 1024, 10000};
  for (const Row& row : rows) {
    for (int i = 0; i < 3; ++i) {
      INFO("payload " << row.payload << " N " << columns[i]);
      CHECK(optimal_radix(columns[i], row.payload, seed).radix == row.radix[i]);
    }
  }
  // The barrier row by hand: N = 128 at r = 12 is two levels of (100 + 2*25) us.
  CHECK(optimal_radix(128, 0, seed).time_us == Approx(300.0));
  CHECK(release_time_us(128, 64, 0, seed) == Approx(600.0));
  CHECK(release_time_us(1024, 64, 0, seed) / optimal_radix(1024, 0, seed).time_us == Approx(1.5));
  // 100 KB at N = 128: radix 4 (depth 4) beats radix 6 (depth 3): 1780 us against 1815 us.
  CHECK(release_time_us(128, 4, 100e3, seed) == Approx(1780.0));
  CHECK(release_time_us(128, 6, 100e3, seed) == Approx(1815.0));
}

TEST_CASE("the radix search is clamped for small daemon counts", "[model]") {
  CostConstants seed;
  CHECK(max_model_radix(2) == 2);
  CHECK(max_model_radix(3) == 2);
  CHECK(max_model_radix(4) == 3);
  // Below N = 4 the flat tree is all there is; at N = 4 the search includes r = N-1.
  CHECK(optimal_radix(2, 1e6, seed).radix == 2);
  CHECK(optimal_radix(3, 0, seed).radix == 2);
  // ceil(log_3 4) = 2, so at N = 4 radix 3 ties radix 2 and the smaller wins.
  CHECK(optimal_radix(4, 0, seed).radix == 2);
  CHECK(optimal_radix(4, 0, seed).time_us == Approx(250.0));
  CHECK(release_time_us(4, 3, 0, seed) == Approx(250.0));
}

TEST_CASE("a radix past N - 1 is the flat tree: N - 1 copies, not radix", "[model]") {
  // grove model charged 64 copies for radix 64 on 16 daemons: twice the
  // flat release measured there.
  CostConstants seed;
  // One level (16^1 covers 16, as 64^1 does) of 15 copies over 8 threads:
  // 100 + ceil(15 / 8) x 25 us.
  CHECK(release_time_us(16, 64, 0, seed) == Approx(150.0));
  CHECK(release_time_us(16, 64, 0, seed) == Approx(release_time_us(16, 16, 0, seed)));
  CHECK(release_time_us(16, 64, 1e5, seed) == Approx(release_time_us(16, 16, 1e5, seed)));
  CHECK(release_time_us(16, 64, 0, seed) < release_time_us(128, 64, 0, seed));
}

TEST_CASE("past the crossover radix 64 costs several times the optimum", "[model]") {
  CostConstants seed;
  for (std::uint64_t n : {128u, 1024u, 10000u}) {
    double optimum = optimal_radix(n, 10e6, seed).time_us;
    double flat = release_time_us(n, 64, 10e6, seed);
    CHECK(flat / optimum > 5.0);
  }
}
