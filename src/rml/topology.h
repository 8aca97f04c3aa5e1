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

enum class TopologyKind : std::uint8_t { routing = 0, release = 1 };
template <>
struct WireEnum<TopologyKind> {
  static constexpr TopologyKind first = TopologyKind::routing, last = TopologyKind::release;
};

std::string_view topology_name(TopologyKind kind);

struct TopologyRadices {
  std::uint32_t routing = 64;
  std::uint32_t release = 4;
};

inline std::uint32_t radix_of(TopologyKind kind, const TopologyRadices& radices) {
  return kind == TopologyKind::routing ? radices.routing : radices.release;
}

inline Tree derive_topology(const Membership& membership, TopologyKind kind,
                            const TopologyRadices& radices) {
  return Tree::derive(membership, radix_of(kind, radices));
}

}  // namespace grove
