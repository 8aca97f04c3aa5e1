// Memoised tree derivation. A derivation is a pure function of (daemon set,
// failed set, radix), so daemons that share a view can share its tree: the
// simulator hands one cache to thousands of engines, a daemon keeps its own.
// The cache is keyed by the complete failed set (its sorted indices); it
// never changes an answer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "rml/membership.h"
#include "rml/tree.h"

namespace grove {

class TreeCache {
 public:
  // The tree for this membership at this radix. Every membership given to
  // one cache must come from one DVM: the same daemon set, or one grown from
  // it (growth only appends vpids, so its size names it).
  Tree get(const Membership& membership, std::uint32_t radix);
  std::size_t size() const { return trees_.size(); }
  std::uint64_t derivations() const { return derivations_; }

 private:
  struct Key {
    std::uint32_t radix = 0;
    std::size_t daemons = 0;
    std::vector<std::uint32_t> failed;
  };
  // A lookup borrows the membership's failed set: every engine asks after
  // every notice, and a copied key was an allocation per ask.
  struct KeyView {
    std::uint32_t radix = 0;
    std::size_t daemons = 0;
    std::span<const std::uint32_t> failed;
  };
  struct Less {
    using is_transparent = void;
    static KeyView view(const Key& key) { return {key.radix, key.daemons, key.failed}; }
    static KeyView view(const KeyView& key) { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      const KeyView x = view(a);
      const KeyView y = view(b);
      if (x.radix != y.radix) return x.radix < y.radix;
      if (x.daemons != y.daemons) return x.daemons < y.daemons;
      return std::lexicographical_compare(x.failed.begin(), x.failed.end(), y.failed.begin(),
                                          y.failed.end());
    }
  };

  std::map<Key, Tree, Less> trees_;
  std::uint64_t derivations_ = 0;
};

}  // namespace grove
