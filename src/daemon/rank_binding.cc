#include "daemon/rank_binding.h"

#include <hwloc.h>

#include <cstdlib>
#include <memory>

namespace grove {

Result<std::optional<RankBinding>> rank_binding(hwloc_topology* topology,
                                                const std::string& bind_to,
                                                std::uint32_t host_rank) {
  if (bind_to == "none") return std::optional<RankBinding>();
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  const char* name = "core";
  if (bind_to == "hwthread") {
    type = HWLOC_OBJ_PU;
    name = "hwthread";
  } else if (bind_to == "socket") {
    type = HWLOC_OBJ_PACKAGE;
    name = "package";
  } else if (bind_to != "core") {
    return Error{"--bind-to '" + bind_to + "': expected none, core, hwthread or socket"};
  }
  if (topology == nullptr)
    return Error{"--bind-to " + bind_to + ": this host's topology is unknown"};
  const int count = hwloc_get_nbobjs_by_type(topology, type);
  if (count <= 0) return Error{"--bind-to " + bind_to + ": this host has no " + name + " objects"};
  hwloc_obj_t object =
      hwloc_get_obj_by_type(topology, type, host_rank % static_cast<unsigned>(count));
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> set(hwloc_bitmap_dup(object->cpuset),
                                                                hwloc_bitmap_free);
  hwloc_bitmap_and(set.get(), set.get(), hwloc_topology_get_allowed_cpuset(topology));
  if (hwloc_bitmap_iszero(set.get())) {
    return Error{"--bind-to " + bind_to + ": " + name + " " +
                 std::to_string(object->logical_index) + " has no CPU this host allows"};
  }
  RankBinding binding;
  for (int cpu = hwloc_bitmap_first(set.get()); cpu >= 0; cpu = hwloc_bitmap_next(set.get(), cpu))
    binding.cpus.push_back(cpu);
  char* list = nullptr;
  hwloc_bitmap_list_asprintf(&list, set.get());
  binding.cpu_list = list != nullptr ? list : "";
  std::free(list);
  binding.what = std::string(name) + " " + std::to_string(object->logical_index);
  binding.shared = host_rank >= static_cast<unsigned>(count);
  return std::optional<RankBinding>(std::move(binding));
}

}  // namespace grove
