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

TEST_CASE("a small vector copies and moves in place and on the heap alike", "[flat_map]") {
  for (unsigned count : {0u, 1u, 2u, 3u, 9u}) {
    SmallVector<unsigned, 2> values;
    for (unsigned i = 0; i < count; ++i)
      values.insert(values.end(), i * 10);
    const std::vector<unsigned> expected(values.begin(), values.end());
    REQUIRE(expected.size() == count);

    SmallVector<unsigned, 2> copy(values);
    CHECK(std::vector<unsigned>(copy.begin(), copy.end()) == expected);
    CHECK(copy == values);
    SmallVector<unsigned, 2> moved(std::move(copy));
    CHECK(std::vector<unsigned>(moved.begin(), moved.end()) == expected);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from one is empty

    SmallVector<unsigned, 2> assigned;
    assigned.insert(assigned.end(), 99);
    assigned.insert(assigned.end(), 98);
    assigned.insert(assigned.end(), 97);  // on the heap before the assignment
    assigned = values;
    CHECK(assigned == values);
    assigned = std::move(moved);
    CHECK(std::vector<unsigned>(assigned.begin(), assigned.end()) == expected);
    auto& self = assigned;
    assigned = self;
    CHECK(std::vector<unsigned>(assigned.begin(), assigned.end()) == expected);

    // Inserting a value that lives in the vector itself, at the front.
    if (count > 0) {
      assigned.insert(assigned.begin(), *(assigned.end() - 1));
      CHECK(*assigned.begin() == expected.back());
      CHECK(assigned.size() == count + 1);
      assigned.erase(assigned.begin());
      CHECK(std::vector<unsigned>(assigned.begin(), assigned.end()) == expected);
    }
  }
}
