// FenceTable: rounds open and close by signature; an ended scope is forgotten
// and its stragglers dropped; the memory of ended scopes is bounded.
#include <catch2/catch.hpp>

#include "grpcomm/fence_table.h"

using namespace grove;

TEST_CASE("a released round closes older ones, but one this daemon joined waits for its own",
          "[fence_table]") {
  FenceTable table;
  FenceKey first = table.next_round("pmix:a:*");
  CHECK(first.generation == 1);
  FenceTracker* tracker = table.open(first);
  REQUIRE(tracker);
  tracker->local = true;
  REQUIRE(table.open(FenceKey{"pmix:a:*", 2}));
  CHECK(table.open_rounds() == 2);
  REQUIRE(table.open(FenceKey{"pmix:a:*", 3}));
  CHECK(table.release(FenceKey{"pmix:a:*", 3}) == false);  // this daemon did not join round 3
  CHECK(table.generation("pmix:a:*") == 3);
  CHECK(table.next_round("pmix:a:*").generation == 4);
  // Round 2 closed with it; round 1, which this daemon contributed to, was
  // overtaken (a repair can reorder releases) and waits for its own release:
  // closing it would lose its answer and its data.
  CHECK(table.open_rounds() == 1);
  CHECK(table.find(FenceKey{"pmix:a:*", 2}) == nullptr);
  CHECK(table.released_but_open() == nullptr);  // allowed: it is owed its release
  CHECK(table.release(first) == true);
  CHECK(table.open_rounds() == 0);
  CHECK(table.generation("pmix:a:*") == 3);  // never back
  // A rollup for a released round is a straggler.
  CHECK(table.open(first) == nullptr);
}

TEST_CASE("an ended scope forgets its signatures and drops stragglers", "[fence_table]") {
  FenceTable table;
  for (std::uint64_t job = 1; job <= 3; ++job) {
    std::string signature = "pmix:j." + std::to_string(job) + ":*";
    REQUIRE(table.open(table.next_round(signature)));
    table.release(FenceKey{signature, 1});
  }
  REQUIRE(table.open(FenceKey{"pmix:j.2:0-3", 1}));
  CHECK(table.known_signatures() == 3);
  table.end_scope("pmix:j.2:");
  CHECK(table.known_signatures() == 2);
  CHECK(table.open_rounds() == 0);
  CHECK(table.generation("pmix:j.1:*") == 1);
  // Job 2's late frames neither reopen a round nor come back as a signature;
  // job 20 shares a prefix of characters with job 2 but not its scope.
  CHECK(table.open(FenceKey{"pmix:j.2:*", 2}) == nullptr);
  table.release(FenceKey{"pmix:j.2:*", 2});
  CHECK(table.known_signatures() == 2);
  CHECK(table.open(FenceKey{"pmix:j.20:*", 1}) != nullptr);
}

TEST_CASE("the memory of ended scopes is bounded", "[fence_table]") {
  FenceTable table;
  const std::size_t jobs = FenceTable::kRetiredScopes + 10;
  for (std::size_t job = 1; job <= jobs; ++job) {
    std::string scope = "pmix:j." + std::to_string(job) + ":";
    table.release(FenceKey{scope + "*", 1});
    table.end_scope(scope);
  }
  CHECK(table.known_signatures() == 0);
  // The oldest ended scopes have left the window; the newest are still dropped.
  CHECK_FALSE(table.scope_ended("pmix:j.1:*"));
  CHECK(table.scope_ended("pmix:j." + std::to_string(jobs) + ":*"));
}
