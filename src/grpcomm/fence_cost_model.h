// A whole fence's cost by its shape, in the terms of the release model
// (radix_cost_model.h), as a line in the fence's aggregate D (every
// contribution, the modex): latency_us + per_byte_us * D.
//   trees: up the routing tree, ceil(log_r1 N) hops of one copy, the whole D
//          into the controller; then the release tree's T(r2) with M = D.
//   bruck: ceil(log2 N) rounds of one copy each, (N-1)/N of D out of every
//          daemon's NIC; no controller in the data's path.
// The trees pay 2 ceil(log_r N)-ish hops and (1 + depth * r2) D of egress at
// the busiest daemon, Bruck log2 N rounds and D: Bruck loses at small D and
// wins past a crossover. Pure arithmetic: `grove model --fence` prints it.
#pragma once

#include <cstdint>
#include <optional>

#include "grpcomm/radix_cost_model.h"

namespace grove {

struct FenceCostLine {
  double latency_us = 0;   // D-independent: hops or rounds, copies
  double per_byte_us = 0;  // the wire's share per byte of the aggregate
  double at(double aggregate_bytes) const { return latency_us + per_byte_us * aggregate_bytes; }
};

// Collection up a radix-`routing` tree, release down a radix-`release` tree
// (equal radices: one tree, such as radix 64 flat for both).
FenceCostLine tree_fence_cost(std::uint64_t daemons, std::uint64_t routing, std::uint64_t release,
                              const CostConstants& constants);

// The Bruck exchange among `daemons` members.
FenceCostLine bruck_fence_cost(std::uint64_t daemons, const CostConstants& constants);

// The aggregate from which `challenger` is faster than `incumbent`: 0 if it
// is faster at any size, nullopt if at none (equal slopes, or it only loses).
std::optional<double> wins_from(const FenceCostLine& challenger, const FenceCostLine& incumbent);

}  // namespace grove
