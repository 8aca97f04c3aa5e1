#include "grpcomm/tags.h"

namespace grove {

std::string_view tag_name(std::uint16_t tag) {
  switch (tag) {
    case tags::membership:
      return "membership";
    case tags::fence_rollup:
      return "fence-rollup";
    case tags::fence_release:
      return "fence-release";
    case tags::group_release:
      return "group-release";
    case tags::op_report:
      return "op-report";
    case tags::op_abort:
      return "op-abort";
    case tags::launch:
      return "launch";
    case tags::bench_release:
      return "bench-release";
    default:
      return tag >= tags::first_daemon_tag ? "daemon" : "unknown";
  }
}

}  // namespace grove
