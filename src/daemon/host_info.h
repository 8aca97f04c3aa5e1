// What a daemon knows about its host: its name, and its hwloc topology,
// loaded once and shared by the core count the controller maps with and the
// PMIx server that hands it to the ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

struct hwloc_topology;

namespace grove {

std::string local_hostname();

class HostTopology {
 public:
  // Never fails: when hwloc cannot load, handle() is null and the host
  // counts as one core.
  static std::unique_ptr<HostTopology> load();
  ~HostTopology();
  HostTopology(const HostTopology&) = delete;
  HostTopology& operator=(const HostTopology&) = delete;

  // Physical cores (at least 1; processing units where hwloc sees no cores).
  std::uint32_t core_count() const { return cores_; }
  // For PMIx_server_init; lives as long as this object.
  hwloc_topology* handle() const { return topology_; }

 private:
  HostTopology() = default;
  hwloc_topology* topology_ = nullptr;
  std::uint32_t cores_ = 1;
};

}  // namespace grove
