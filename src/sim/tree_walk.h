// The cost model walked hop by hop on a tree as grove derives it, rather than
// on the model's full tree: the k-th child of a daemon holds the payload
// alpha + ceil(k/t) c + k M/B after its parent did, and an acknowledgement
// costs alpha + c per hop back up. T(r) is this walk when every level is full
// and the critical path runs through the last child at each level; a partly
// filled last level is where the two part. Benchmarks and tests use it to
// tell the model's shape assumption apart from the simulator's behaviour.
#pragma once

#include <cstdint>

#include "grpcomm/radix_cost_model.h"

namespace grove {

double walked_span_us(std::uint32_t daemons, std::uint32_t radix, double frame_bytes,
                      const CostConstants& constants);

}  // namespace grove
