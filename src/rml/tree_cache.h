// Memoised tree derivation. A derivation is a pure function of (daemon set,
// failed set, radix), so daemons that share a view can share its tree: the
// simulator hands one cache to thousands of engines, a daemon keeps its own.
// The cache is keyed by the complete failed set; it never changes an answer.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "rml/membership.h"
#include "rml/tree.h"

namespace grove {

class TreeCache {
 public:
  // The tree for this membership at this radix. The daemon set must be the
  // same for every membership given to one cache.
  Tree get(const Membership& membership, std::uint32_t radix);
  std::size_t size() const { return trees_.size(); }
  std::uint64_t derivations() const { return derivations_; }

 private:
  std::map<std::pair<std::uint32_t, std::vector<std::uint64_t>>, Tree> trees_;
  std::uint64_t derivations_ = 0;
};

}  // namespace grove
