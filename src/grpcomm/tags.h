// Message tags of the collective engine. Each tag has one receive path, and
// the release seam picks a topology by tag: a fence release is the whole
// modex, far past the model's crossover, so it takes the low-radix release
// tree; everything small stays on the routing tree.
#pragma once

#include <cstdint>
#include <string_view>

#include "rml/topology.h"

namespace grove {

namespace tags {
inline constexpr std::uint16_t membership = 1;     // departure/return notices
inline constexpr std::uint16_t fence_rollup = 2;   // contributions up the routing tree
inline constexpr std::uint16_t fence_release = 3;  // a fence's aggregate, down
inline constexpr std::uint16_t group_release = 4;  // a group collective's release
inline constexpr std::uint16_t op_report = 5;      // daemon -> controller: an op went wrong
inline constexpr std::uint16_t op_abort = 6;       // controller -> all: an op ended in error
inline constexpr std::uint16_t launch = 7;         // job launch messages
inline constexpr std::uint16_t bench_release =
    8;  // `grove bench release`: a release without a fence
inline constexpr std::uint16_t first_daemon_tag = 64;  // tags >= this belong to the daemon
}  // namespace tags

std::string_view tag_name(std::uint16_t tag);

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

}  // namespace grove
