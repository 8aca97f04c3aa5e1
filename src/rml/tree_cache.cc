#include "rml/tree_cache.h"

namespace grove {

Tree TreeCache::get(const Membership& membership, std::uint32_t radix) {
  auto key = std::make_pair(radix, membership.failed_bitmap());
  auto found = trees_.find(key);
  if (found != trees_.end()) return found->second;
  ++derivations_;
  Tree tree = Tree::derive(membership, radix);
  trees_.emplace(std::move(key), tree);
  return tree;
}

}  // namespace grove
