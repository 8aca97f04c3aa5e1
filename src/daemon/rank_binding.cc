#include "daemon/rank_binding.h"

#include <hwloc.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "os/cpu_binding.h"

namespace grove {

namespace {
using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)>;
}

Result<std::optional<RankBinding>> rank_binding(hwloc_topology* topology,
                                                const std::string& bind_to, std::uint32_t host_rank,
                                                std::uint32_t cores_per_rank) {
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
  if (topology == nullptr) {
    return Error{"--bind-to " + bind_to + ": this host's topology is unknown"};
  }
  // Only the CPUs the daemon was given (its cgroup, taskset, srun's
  // binding) count: an object with none of them is skipped.
  Bitmap given(hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topology)), hwloc_bitmap_free);
  Bitmap mask(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  for (int cpu : given_cpus())
    hwloc_bitmap_set(mask.get(), static_cast<unsigned>(cpu));
  if (!hwloc_bitmap_iszero(mask.get())) hwloc_bitmap_and(given.get(), given.get(), mask.get());
  std::vector<hwloc_obj_t> usable;
  const int count = hwloc_get_nbobjs_by_type(topology, type);
  for (int at = 0; at < count; ++at) {
    hwloc_obj_t candidate = hwloc_get_obj_by_type(topology, type, static_cast<unsigned>(at));
    if (candidate != nullptr && hwloc_bitmap_intersects(candidate->cpuset, given.get()))
      usable.push_back(candidate);
  }
  if (usable.empty()) {
    return Error{"--bind-to " + bind_to + ": this daemon was given no CPU of any " + name};
  }
  // Sockets are bound one per rank; cores and hwthreads K per rank.
  const std::uint64_t width =
      type == HWLOC_OBJ_PACKAGE ? 1 : std::max<std::uint32_t>(1, cores_per_rank);
  const std::uint64_t first = std::uint64_t{host_rank} * width;
  Bitmap set(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  for (std::uint64_t at = first; at < first + width; ++at)
    hwloc_bitmap_or(set.get(), set.get(), usable[at % usable.size()]->cpuset);
  hwloc_bitmap_and(set.get(), set.get(), given.get());
  hwloc_obj_t object = usable[first % usable.size()];
  RankBinding binding;
  for (int cpu = hwloc_bitmap_first(set.get()); cpu >= 0; cpu = hwloc_bitmap_next(set.get(), cpu))
    binding.cpus.push_back(cpu);
  char* list = nullptr;
  hwloc_bitmap_list_asprintf(&list, set.get());
  binding.cpu_list = list != nullptr ? list : "";
  std::free(list);
  binding.what =
      std::string(name) + (width > 1 ? "s " : " ") + std::to_string(object->logical_index) +
      (width > 1 ? "-" + std::to_string(usable[(first + width - 1) % usable.size()]->logical_index)
                 : std::string());
  binding.shared = first + width > usable.size();
  return std::optional<RankBinding>(std::move(binding));
}

}  // namespace grove
