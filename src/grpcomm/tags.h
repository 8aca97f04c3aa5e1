// Message tags of the collective engine. Each tag has one receive path, and
// the release seam picks a topology by tag: a fence release is the whole
// modex, far past the model's crossover, so it takes the low-radix release
// tree; everything small stays on the routing tree.
#pragma once

#include <cstdint>
#include <string_view>

#include "rml/tag_registry.h"
#include "rml/topology.h"

namespace grove {

// Releases are what grpcomm_release_delay_ms holds and what may take the release tree.
inline bool is_release_tag(std::uint16_t tag) {
  return tag == tags::fence_release || tag == tags::group_release || tag == tags::bench_release;
}

// The release seam's choice: fence releases (and bench releases, which measure
// them) travel the release tree when the low-radix release is on.
inline TopologyKind topology_for_tag(std::uint16_t tag, bool low_radix_release) {
  bool low = tag == tags::fence_release || tag == tags::bench_release;
  return low && low_radix_release ? TopologyKind::release : TopologyKind::routing;
}

// Who acts on a broadcast when it is delivered on a daemon (once per op).
// The driver sees every delivery except the engine's own bookkeeping; the
// engine's half ends a fence on its release and an op on its abort. A
// membership notice is neither: it was applied on receipt, before delivery.
enum class DeliveryEnds : std::uint8_t { nothing, fence, op };
struct DeliveryRoute {
  bool to_driver = true;  // as a DeliverBroadcast effect
  DeliveryEnds ends = DeliveryEnds::nothing;
};

constexpr DeliveryRoute delivery_route(std::uint16_t tag) {
  switch (tag) {
    case tags::fence_release:
      return {true, DeliveryEnds::fence};
    case tags::op_abort:
      return {false, DeliveryEnds::op};
    case tags::membership:
      return {false, DeliveryEnds::nothing};
    default:
      return {true, DeliveryEnds::nothing};
  }
}

}  // namespace grove
