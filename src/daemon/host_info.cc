#include "daemon/host_info.h"

#include <hwloc.h>
#include <unistd.h>

namespace grove {

std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::unique_ptr<HostTopology> HostTopology::load() {
  std::unique_ptr<HostTopology> host(new HostTopology());
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return host;
  // What the ranks need from it (libpmix shares this copy with them): PCI
  // devices that matter for locality (NICs, GPUs), as PRRTE keeps them. The
  // GL component is left out: it probes X displays :0 to :9, milliseconds
  // for a server that never has one.
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
  hwloc_topology_set_flags(topology, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
  if (hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return host;
  }
  host->topology_ = topology;
  int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  if (cores > 0) host->cores_ = static_cast<std::uint32_t>(cores);
  return host;
}

HostTopology::~HostTopology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

}  // namespace grove
