// What a daemon knows about its host: its name, and its hwloc topology,
// loaded once and shared by the core count the controller maps with and the
// PMIx server that hands it to the ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "util/result.h"

struct hwloc_topology;

namespace grove {

std::string local_hostname();

class HostTopology {
 public:
  // Discovers this host (tens of milliseconds, most of it reading PCI
  // configuration space), or, given `xml_file`, imports the topology another
  // process on this same host exported (the controller's, for the daemons it
  // starts here: well under a millisecond). An import that fails falls back
  // to discovery. Never fails: when hwloc cannot load, handle() is null and
  // the host counts as one core.
  static std::unique_ptr<HostTopology> load(const std::string& xml_file = {});
  ~HostTopology();
  HostTopology(const HostTopology&) = delete;
  HostTopology& operator=(const HostTopology&) = delete;

  // Physical cores (at least 1; processing units where hwloc sees no cores).
  std::uint32_t core_count() const { return cores_; }
  // Packages (sockets), at least 1.
  std::uint32_t package_count() const { return packages_; }
  // For PMIx_server_init; lives as long as this object.
  hwloc_topology* handle() const { return topology_; }
  // Whether load() imported it rather than discovering it.
  bool imported() const { return imported_; }

  // Writes the topology as hwloc XML for load(xml_file) in daemons on this
  // host.
  Status export_xml(const std::string& path) const;

 private:
  HostTopology() = default;
  hwloc_topology* topology_ = nullptr;
  std::uint32_t cores_ = 1;
  std::uint32_t packages_ = 1;
  bool imported_ = false;
};

}  // namespace grove
