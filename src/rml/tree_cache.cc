#include "rml/tree_cache.h"

namespace grove {

Tree TreeCache::get(const Membership& membership, std::uint32_t radix) {
  const KeyView key{radix, membership.size(), membership.failed_indices()};
  auto found = trees_.find(key);
  if (found != trees_.end()) return found->second;
  ++derivations_;
  Tree tree = Tree::derive(membership, radix);
  trees_.emplace(Key{radix, membership.size(), membership.failed_indices()}, tree);
  return tree;
}

}  // namespace grove
