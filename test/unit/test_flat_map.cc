// FlatMap and FlatSet keep std::map / std::set's order and answers.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "util/flat_map.h"

using namespace grove;

TEST_CASE("flat maps and sets agree with std::map and std::set", "[flat_map]") {
  std::mt19937 rng(7);
  FlatMap<unsigned, unsigned> flat;
  std::map<unsigned, unsigned> reference;
  FlatSet<unsigned> flat_set;
  std::set<unsigned> reference_set;
  for (int step = 0; step < 20000; ++step) {
    unsigned key = rng() % 64;
    switch (rng() % 5) {
      case 0:
        flat[key] = step;
        reference[key] = step;
        break;
      case 1:
        CHECK(flat.try_emplace(key, step).second == reference.try_emplace(key, step).second);
        break;
      case 2: {
        unsigned cut = rng() % 64;
        erase_if(flat, [&](const auto& entry) { return entry.first < cut; });
        std::erase_if(reference, [&](const auto& entry) { return entry.first < cut; });
        break;
      }
      case 3:
        CHECK(flat_set.insert(key) == reference_set.insert(key).second);
        break;
      case 4:
        CHECK(flat_set.erase(key) == reference_set.erase(key));
        break;
    }
    REQUIRE(flat.size() == reference.size());
    REQUIRE(std::equal(
        flat.begin(), flat.end(), reference.begin(), reference.end(),
        [](const auto& a, const auto& b) { return a.first == b.first && a.second == b.second; }));
    REQUIRE(
        std::equal(flat_set.begin(), flat_set.end(), reference_set.begin(), reference_set.end()));
    CHECK(flat.count(key) == reference.count(key));
    CHECK(flat_set.count(key) == reference_set.count(key));
  }
}
