// The two named trees over the derivation: the routing tree (rml_base_radix)
// carries fence rollups, routed sends and group releases; the release tree
// (rml_base_radix2) carries fence releases over direct links. At equal radices
// they are the same tree for every daemon and every failure pattern.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "rml/membership.h"
#include "rml/tree.h"
#include "util/wire.h"

namespace grove {

// bruck is not a tree: the fence exchange's frames are stamped with it
// (grpcomm_fence_topology bruck), and nothing is derived for it.
enum class TopologyKind : std::uint8_t { routing = 0, release = 1, bruck = 2 };
template <>
struct WireEnum<TopologyKind> {
  static constexpr TopologyKind first = TopologyKind::routing, last = TopologyKind::bruck;
};

std::string_view topology_name(TopologyKind kind);

struct TopologyRadices {
  std::uint32_t routing = 64;
  std::uint32_t release = 4;
};

// The Bruck exchange doubles its distance each round: its "radix" is 2.
inline constexpr std::uint32_t kBruckRadix = 2;

inline std::uint32_t radix_of(TopologyKind kind, const TopologyRadices& radices) {
  if (kind == TopologyKind::bruck) return kBruckRadix;
  return kind == TopologyKind::routing ? radices.routing : radices.release;
}

inline Tree derive_topology(const Membership& membership, TopologyKind kind,
                            const TopologyRadices& radices) {
  return Tree::derive(membership, radix_of(kind, radices));
}

}  // namespace grove
