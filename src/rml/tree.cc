#include "rml/tree.h"

#include <algorithm>
#include <cassert>
#include <numeric>
#include <utility>

namespace grove {
namespace {

// The subtree of a slot, as one [first, last] range of slots per level.
std::vector<std::pair<std::uint64_t, std::uint64_t>> subtree_levels(std::uint64_t slot,
                                                                    std::uint64_t radix,
                                                                    std::uint64_t size) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> levels;
  std::uint64_t first = slot;
  std::uint64_t last = slot;
  while (first < size) {
    levels.emplace_back(first, std::min(last, size - 1));
    first = first * radix + 1;
    last = last * radix + radix;
  }
  return levels;
}

}  // namespace

Tree Tree::derive(const Membership& membership, std::uint32_t radix) {
  assert(radix >= 2);
  auto layout = std::make_shared<Layout>();
  Layout& tree = *layout;
  tree.radix = radix;
  tree.daemons = membership.shared_daemons();
  const auto size = static_cast<std::uint32_t>(tree.daemons->size());
  tree.slot_of.resize(size);
  std::iota(tree.slot_of.begin(), tree.slot_of.end(), 0U);
  tree.occupant = tree.slot_of;
  const std::vector<std::uint32_t>& failed = membership.failed_indices();
  for (std::uint32_t i : failed) {
    tree.slot_of[i] = kNone;
    tree.occupant[i] = kNone;
  }
  tree.member_count = size - failed.size();
  // Fill dead slots from the root down. The candidate for slot s is the
  // highest-positioned daemon of s's subtree still in its home slot: any of its
  // descendants would rank higher, so all of them are dead or gone, and
  // vacating its slot strands nobody.
  for (std::uint32_t slot : failed) {  // sorted: root first
    auto levels = subtree_levels(slot, radix, size);
    for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
      std::uint32_t chosen = kNone;
      for (std::uint64_t candidate = level->second + 1; candidate-- > level->first;) {
        if (tree.slot_of[candidate] == candidate && candidate != slot) {
          chosen = static_cast<std::uint32_t>(candidate);
          break;
        }
      }
      if (chosen == kNone) continue;
      tree.occupant[chosen] = kNone;
      tree.occupant[slot] = chosen;
      tree.slot_of[chosen] = slot;
      break;
    }
  }
  Tree out;
  out.layout_ = std::move(layout);
  return out;
}

std::optional<std::uint32_t> Tree::index_of(Vpid vpid) const {
  auto index = daemon_index(*layout_->daemons, vpid);
  if (!index) return std::nullopt;
  return static_cast<std::uint32_t>(*index);
}

std::optional<std::uint32_t> Tree::slot_of_vpid(Vpid vpid) const {
  auto index = index_of(vpid);
  if (!index) return std::nullopt;
  std::uint32_t slot = layout_->slot_of[*index];
  if (slot == kNone) return std::nullopt;
  return slot;
}

bool Tree::contains(Vpid vpid) const {
  return slot_of_vpid(vpid).has_value();
}

std::optional<Vpid> Tree::parent(Vpid vpid) const {
  auto slot = slot_of_vpid(vpid);
  if (!slot || *slot == 0) return std::nullopt;
  std::uint32_t occupant = layout_->occupant[parent_slot(*slot)];
  assert(occupant != kNone);  // an occupied slot's parent slot is always occupied
  return vpid_at(occupant);
}

std::vector<Vpid> Tree::children(Vpid vpid) const {
  std::vector<Vpid> out;
  for_each_child(vpid, [&](Vpid child, std::uint32_t) { out.push_back(child); });
  return out;
}

std::optional<std::uint32_t> Tree::depth(Vpid vpid) const {
  auto slot = slot_of_vpid(vpid);
  if (!slot) return std::nullopt;
  std::uint32_t hops = 0;
  for (std::uint32_t s = *slot; s != 0; s = parent_slot(s))
    ++hops;
  return hops;
}

std::vector<Vpid> Tree::subtree(Vpid vpid) const {
  std::vector<Vpid> out;
  auto slot = slot_of_vpid(vpid);
  if (!slot) return out;
  const auto& occupant = layout_->occupant;
  const std::uint64_t size = occupant.size();
  // Level by level, each a contiguous run of slots (as subtree_levels, without
  // building the list: every daemon asks after every repair).
  for (std::uint64_t first = *slot, last = *slot; first < size;
       first = first * layout_->radix + 1, last = last * layout_->radix + layout_->radix) {
    for (std::uint64_t s = first; s <= std::min(last, size - 1); ++s) {
      if (occupant[s] != kNone) out.push_back(vpid_at(occupant[s]));
    }
  }
  return out;
}

std::optional<Vpid> Tree::next_hop(Vpid from, Vpid to) const {
  auto from_slot = slot_of_vpid(from);
  auto to_slot = slot_of_vpid(to);
  if (!from_slot || !to_slot || *from_slot == *to_slot) return std::nullopt;
  // Walk up from the target; if we pass through `from`, the slot just below it
  // is the child to take. Otherwise the route goes up.
  for (std::uint32_t s = *to_slot; s > *from_slot;) {
    std::uint32_t up = parent_slot(s);
    if (up == *from_slot) return vpid_at(layout_->occupant[s]);
    s = up;
  }
  return parent(from);
}

bool Tree::promoted(Vpid vpid) const {
  auto index = index_of(vpid);
  if (!index) return false;
  return layout_->slot_of[*index] != kNone && layout_->slot_of[*index] != *index;
}

std::vector<Vpid> Tree::members() const {
  std::vector<Vpid> out;
  out.reserve(layout_->member_count);
  for (std::uint32_t occupant : layout_->occupant) {
    if (occupant != kNone) out.push_back(vpid_at(occupant));
  }
  return out;
}

}  // namespace grove
