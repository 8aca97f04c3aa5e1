#include "daemon/versions.h"

#include <hwloc.h>
#include <pmix.h>

#include "os/event_loop.h"

#ifndef GROVE_VERSION
#define GROVE_VERSION "unknown"
#endif

namespace grove {

std::vector<std::pair<std::string, std::string>> library_versions() {
  // hwloc tells its release only at compile time; at run time, the version
  // of its API (0xMMmmrr), which changes less often.
  const unsigned api = hwloc_get_api_version();
  const std::string hwloc_text =
      std::string(HWLOC_VERSION) + " (run-time API " + std::to_string(api >> 16) + "." +
      std::to_string((api >> 8) & 0xff) + "." + std::to_string(api & 0xff) + ")";
  const char* pmix = PMIx_Get_version();
  return {{"libpmix", pmix != nullptr ? pmix : "unknown"},
          {"libevent", event_library_version()},
          {"hwloc", hwloc_text}};
}

std::string version_text(const std::string& program) {
  std::string text = program + " " + GROVE_VERSION + " (git " + build_revision() + ")";
  for (const auto& [library, version] : library_versions())
    text += "\n  " + library + ": " + version;
  return text;
}

}  // namespace grove
