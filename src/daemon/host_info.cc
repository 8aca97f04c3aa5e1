#include "daemon/host_info.h"

#include <hwloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace grove {

std::string local_hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

namespace {

// hwloc opens every plugin it finds at a process's first topology. The GL
// one links X11 and probes displays :0 to :9, the OpenCL one an ICD loader:
// milliseconds of loading for nothing a rank's locality needs (NICs and
// GPUs come from PCI and Linux's own objects). An import needs no plugin at
// all (hwloc parses its own XML). The user's HWLOC_PLUGINS_BLACKLIST wins;
// ours is set only around the first hwloc call, so ranks never inherit it.
class PluginBlacklist {
 public:
  explicit PluginBlacklist(bool importing) {
    if (std::getenv("HWLOC_PLUGINS_BLACKLIST") != nullptr) return;
    setenv("HWLOC_PLUGINS_BLACKLIST",
           importing ? "hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml" : "hwloc_gl,hwloc_opencl",
           1);
    set_ = true;
  }
  ~PluginBlacklist() {
    if (set_) unsetenv("HWLOC_PLUGINS_BLACKLIST");
  }
  PluginBlacklist(const PluginBlacklist&) = delete;
  PluginBlacklist& operator=(const PluginBlacklist&) = delete;

 private:
  bool set_ = false;
};

// This host's topology, imported from `xml_file` or, when it is empty,
// discovered; null if hwloc cannot load it. What the ranks need from it
// (libpmix shares this copy with them) is the PCI devices that matter for
// locality (NICs, GPUs), as PRRTE keeps them. IS_THISSYSTEM: binding
// through an imported topology acts on this host, which the exporter shares.
hwloc_topology_t load_topology(const std::string& xml_file) {
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) return nullptr;
  hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_components(topology, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
  hwloc_topology_set_flags(topology, HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM);
  if ((!xml_file.empty() && hwloc_topology_set_xml(topology, xml_file.c_str()) != 0) ||
      hwloc_topology_load(topology) != 0) {
    hwloc_topology_destroy(topology);
    return nullptr;
  }
  return topology;
}

}  // namespace

std::unique_ptr<HostTopology> HostTopology::load(const std::string& xml_file) {
  std::unique_ptr<HostTopology> host(new HostTopology());
  hwloc_topology_t topology = nullptr;
  if (!xml_file.empty()) {
    PluginBlacklist blacklist(true);
    topology = load_topology(xml_file);
    host->imported_ = topology != nullptr;
  }
  // A failed import destroyed its topology, and with the last one hwloc
  // unloads its plugins: discovery opens them again, with its own list.
  if (topology == nullptr) {
    PluginBlacklist blacklist(false);
    topology = load_topology({});
  }
  if (topology == nullptr) return host;
  host->topology_ = topology;
  int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  if (cores <= 0) cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  if (cores > 0) host->cores_ = static_cast<std::uint32_t>(cores);
  const int packages = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PACKAGE);
  if (packages > 0) host->packages_ = static_cast<std::uint32_t>(packages);
  return host;
}

Status HostTopology::export_xml(const std::string& path) const {
  if (topology_ == nullptr) return Error{"no topology to export"};
  if (hwloc_topology_export_xml(topology_, path.c_str(), 0) != 0)
    return Error{"exporting the topology to " + path + ": " + std::strerror(errno)};
  return ok_status();
}

HostTopology::~HostTopology() {
  if (topology_ != nullptr) hwloc_topology_destroy(topology_);
}

}  // namespace grove
