#include "daemon/host_info.h"

#include <hwloc.h>
#include <unistd.h>

namespace grove {

std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

std::uint32_t local_core_count() {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return 1;
  int cores = 0;
  if (hwloc_topology_load(topology) == 0) {
    cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
    if (cores <= 0) cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  }
  hwloc_topology_destroy(topology);
  return cores > 0 ? static_cast<std::uint32_t>(cores) : 1;
}

}  // namespace grove
