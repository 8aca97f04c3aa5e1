#include "rml/topology.h"

namespace grove {

std::string_view topology_name(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::routing:
      return "routing";
    case TopologyKind::release:
      return "release";
  }
  return "unknown";
}

std::optional<TopologyKind> parse_topology(std::string_view name) {
  if (name == "routing") return TopologyKind::routing;
  if (name == "release") return TopologyKind::release;
  return std::nullopt;
}

}  // namespace grove
