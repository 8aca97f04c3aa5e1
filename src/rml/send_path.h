// How a frame leaves a daemon. The names are stable: with rml_base_verbose 2
// every send is logged with one, so a test (or a user checking a measurement)
// can see that release-tree edges were sent direct and not relayed.
#pragma once

#include <cstdint>
#include <string_view>

namespace grove {

enum class SendPath : std::uint8_t {
  routed,  // to the next hop on the routing tree toward the destination
  direct,  // straight to a lateral peer (release-tree edges)
  relay,   // forwarding someone else's routed frame one more hop
};

inline std::string_view send_path_name(SendPath path) {
  switch (path) {
    case SendPath::routed:
      return "RML-SEND-ROUTED";
    case SendPath::direct:
      return "RML-SEND-DIRECT";
    case SendPath::relay:
      return "RML-SEND-RELAY";
  }
  return "RML-SEND-UNKNOWN";
}

}  // namespace grove
