#include "rml/topology.h"

namespace grove {

std::string_view topology_name(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::routing:
      return "routing";
    case TopologyKind::release:
      return "release";
    case TopologyKind::bruck:
      return "bruck";
  }
  return "unknown";
}

}  // namespace grove
