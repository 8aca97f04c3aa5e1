// Benchmark (not a test): what one tree derivation costs at 10,000 daemons with
// 1% failed. A derivation happens on every repair, on every daemon.
// Usage: bench_tree_derivation [RESULT.json]
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>

#include "rml/membership.h"
#include "rml/tree.h"

using namespace grove;

int main(int argc, char** argv) {
  constexpr std::size_t kDaemons = 10000;
  constexpr std::size_t kFailed = kDaemons / 100;
  std::vector<Vpid> daemons(kDaemons);
  for (std::size_t i = 0; i < kDaemons; ++i)
    daemons[i] = static_cast<Vpid>(i);
  Membership membership = *Membership::create(daemons);
  std::mt19937_64 rng(20261130);
  std::uint64_t epoch = 0;
  while (membership.failed().size() < kFailed) {
    Vpid victim = static_cast<Vpid>(1 + rng() % (kDaemons - 1));
    membership.apply({MembershipEventKind::departure, victim, ++epoch});
  }
  nlohmann::json results = nlohmann::json::array();
  for (std::uint32_t radix : {2u, 4u, 64u}) {
    // Warm up, then time enough derivations for a stable figure.
    std::size_t sink = Tree::derive(membership, radix).member_count();
    constexpr int kRounds = 200;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i)
      sink += Tree::derive(membership, radix).member_count();
    auto elapsed = std::chrono::steady_clock::now() - start;
    double per_us = std::chrono::duration<double, std::micro>(elapsed).count() / kRounds;
    Tree tree = Tree::derive(membership, radix);
    std::size_t promoted = 0;
    for (Vpid vpid : tree.members())
      promoted += tree.promoted(vpid) ? 1 : 0;
    std::printf("radix %3u: %zu daemons, %zu failed: derive %.1f us (%zu promoted) [%zu]\n", radix,
                kDaemons, kFailed, per_us, promoted, sink % 2);
    results.push_back({{"radix", radix},
                       {"daemons", kDaemons},
                       {"failed", kFailed},
                       {"derive_us", per_us},
                       {"promoted", promoted}});
  }
  if (argc > 1) {
    std::ofstream(argv[1])
        << nlohmann::json{{"benchmark", "tree_derivation"}, {"results", results}}.dump(2) << "\n";
  }
  return 0;
}
