#include "sim/tree_walk.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "rml/membership.h"
#include "rml/tree.h"

namespace grove {

double walked_span_us(std::uint32_t daemons, std::uint32_t radix, double frame_bytes,
                      const CostConstants& constants) {
  std::vector<Vpid> vpids(daemons);
  for (Vpid vpid = 0; vpid < daemons; ++vpid)
    vpids[vpid] = vpid;
  const Tree tree = Tree::derive(*Membership::create(vpids), radix);
  const double wire_us = frame_bytes / constants.bandwidth_bytes_per_s * 1e6;
  const double ack_us = constants.alpha_us + constants.copy_us;
  std::vector<double> held_us(daemons, 0.0);
  double span_us = 0;
  for (Vpid parent : tree.members()) {  // breadth first: a parent before its children
    const std::vector<Vpid> children = tree.children(parent);
    for (std::size_t index = 0; index < children.size(); ++index) {
      const double copies = static_cast<double>(index + 1);
      const Vpid child = children[index];
      held_us[child] = held_us[parent] + constants.alpha_us +
                       std::ceil(copies / constants.threads) * constants.copy_us + copies * wire_us;
      span_us = std::max(span_us, held_us[child] + *tree.depth(child) * ack_us);
    }
  }
  return span_us;
}

}  // namespace grove
