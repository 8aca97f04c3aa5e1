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

}  // namespace grove
