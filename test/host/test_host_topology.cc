// HostTopology: a daemon on the controller's host imports the controller's
// export instead of discovering the host again; the import is the same
// machine, a failed import falls back to discovery, and the plugin list set
// for hwloc never outlives the load (ranks inherit the daemon's environment).
#include <hwloc.h>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "daemon/host_info.h"
#include "support/temp_dir.h"

using namespace grove;
using grove::test::TempDir;

namespace {

int count_of(const HostTopology& host, hwloc_obj_type_t type) {
  return hwloc_get_nbobjs_by_type(host.handle(), type);
}

}  // namespace

TEST_CASE("a topology exported by one process imports as the same host in another",
          "[host_topology]") {
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  auto discovered = HostTopology::load();
  REQUIRE(discovered->handle() != nullptr);
  CHECK_FALSE(discovered->imported());
  CHECK(std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr);

  TempDir dir("grove-topology");
  const std::string xml = dir.path() + "/topology.xml";
  REQUIRE(discovered->export_xml(xml));

  auto imported = HostTopology::load(xml);
  REQUIRE(imported->handle() != nullptr);
  CHECK(imported->imported());
  CHECK(std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr);
  CHECK(imported->core_count() == discovered->core_count());
  for (hwloc_obj_type_t type : {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_CORE, HWLOC_OBJ_PU, HWLOC_OBJ_NUMANODE,
                                HWLOC_OBJ_PCI_DEVICE, HWLOC_OBJ_OS_DEVICE}) {
    INFO("hwloc object type " << hwloc_obj_type_string(type));
    CHECK(count_of(*imported, type) == count_of(*discovered, type));
  }
  // Binding through it acts on this host, as through a discovered one.
  CHECK(hwloc_topology_is_thissystem(imported->handle()) == 1);
  CHECK(hwloc_bitmap_isequal(hwloc_topology_get_allowed_cpuset(imported->handle()),
                             hwloc_topology_get_allowed_cpuset(discovered->handle())));
}

TEST_CASE("an import that fails discovers the host instead", "[host_topology]") {
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
  auto discovered = HostTopology::load();
  TempDir dir("grove-topology");
  const std::string garbage = dir.path() + "/garbage.xml";
  std::ofstream(garbage) << "not a topology\n";
  for (const std::string& file : {dir.path() + "/missing.xml", garbage}) {
    INFO(file);
    auto host = HostTopology::load(file);
    REQUIRE(host->handle() != nullptr);
    CHECK_FALSE(host->imported());
    CHECK(host->core_count() == discovered->core_count());
    CHECK(count_of(*host, HWLOC_OBJ_PU) == count_of(*discovered, HWLOC_OBJ_PU));
  }
  CHECK(std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr);
  CHECK_FALSE(discovered->export_xml(dir.path() + "/no/such/dir/topology.xml"));
}

TEST_CASE("the user's hwloc plugin list is left as the user set it", "[host_topology]") {
  setenv("HWLOC_PLUGINS_BLACKLIST", "hwloc_gl", 1);
  auto host = HostTopology::load();
  CHECK(host->handle() != nullptr);
  REQUIRE(std::getenv("HWLOC_PLUGINS_BLACKLIST") != nullptr);
  CHECK(std::string(std::getenv("HWLOC_PLUGINS_BLACKLIST")) == "hwloc_gl");
  unsetenv("HWLOC_PLUGINS_BLACKLIST");
}
