// Tree derivation: parent, children, depth and next hop for every daemon, as a
// pure function of (daemon set, failed set, radix). Every daemon computes the
// same tree from the same inputs with no exchange; that is what keeps a fence
// from deadlocking around a fault.
//
// Layout: the sorted daemon set is laid out as a complete radix-r tree by
// position ("slots": slot s has children r*s+1 .. r*s+r). A failed daemon's
// slot is taken by the highest-positioned living daemon of that slot's
// subtree that still sits in its own slot (necessarily one whose descendants
// have all failed), processed from the root down. Only the promoted daemon and
// the dead daemon's children see a new parent; everyone else keeps theirs.
//
// Parent and children are both read off the one slot assignment, so they
// cannot disagree (the seed's first repair bug was two promotion rules).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "rml/membership.h"

namespace grove {

class Tree {
 public:
  // radix must be >= 2 (asserted: parameters are validated long before).
  static Tree derive(const Membership& membership, std::uint32_t radix);

  std::uint32_t radix() const { return layout_->radix; }
  Vpid root() const { return (*layout_->daemons)[0]; }
  // Living daemons only; a failed or unknown vpid is in no tree.
  bool contains(Vpid vpid) const;
  std::optional<Vpid> parent(Vpid vpid) const;
  // In slot order (deterministic). Empty for a leaf or a non-member.
  std::vector<Vpid> children(Vpid vpid) const;
  // Calls visit(child, child's slot) for each child of vpid, in slot order
  // (children() without building a list).
  template <typename Visit>
  void for_each_child(Vpid vpid, Visit visit) const {
    const auto slot = slot_of_vpid(vpid);
    if (!slot) return;
    const auto& occupant = layout_->occupant;
    const std::uint64_t first = std::uint64_t{*slot} * layout_->radix + 1;
    const std::uint64_t end = std::min<std::uint64_t>(first + layout_->radix, occupant.size());
    for (std::uint64_t child = first; child < end; ++child) {
      if (occupant[child] != kNone)
        visit(vpid_at(occupant[child]), static_cast<std::uint32_t>(child));
    }
  }
  // Hops from the root; nullopt for a non-member.
  std::optional<std::uint32_t> depth(Vpid vpid) const;
  // Every member of vpid's subtree, vpid first, then in breadth-first slot order.
  std::vector<Vpid> subtree(Vpid vpid) const;
  // The neighbour a routed message from `from` toward `to` goes to next: the
  // child whose subtree holds `to`, else the parent. nullopt when from == to or
  // either is not a living member.
  std::optional<Vpid> next_hop(Vpid from, Vpid to) const;
  // The slot vpid occupies (its position in the layout), or nullopt if not a member.
  std::optional<std::uint32_t> slot(Vpid vpid) const { return slot_of_vpid(vpid); }
  // Whether vpid sits in a slot other than its own (it was promoted).
  bool promoted(Vpid vpid) const;
  std::size_t member_count() const { return layout_->member_count; }
  // Living members in slot (breadth-first) order.
  std::vector<Vpid> members() const;

 private:
  static constexpr std::uint32_t kNone = UINT32_MAX;

  // Immutable once derived, so copies of a Tree share it.
  struct Layout {
    std::uint32_t radix = 2;
    std::shared_ptr<const std::vector<Vpid>> daemons;  // sorted; index = home slot
    std::vector<std::uint32_t> slot_of;                // daemon index -> slot it occupies, or kNone
    std::vector<std::uint32_t> occupant;               // slot -> daemon index, or kNone
    std::size_t member_count = 0;
  };

  // Position of vpid in the daemon set, if it is in it.
  std::optional<std::uint32_t> index_of(Vpid vpid) const;

  std::optional<std::uint32_t> slot_of_vpid(Vpid vpid) const;
  std::uint32_t parent_slot(std::uint32_t slot) const { return (slot - 1) / layout_->radix; }
  Vpid vpid_at(std::uint32_t index) const { return (*layout_->daemons)[index]; }

  std::shared_ptr<const Layout> layout_;
};

}  // namespace grove
