// What a daemon tells the controller about its host.
#pragma once

#include <cstdint>
#include <string>

namespace grove {

std::string local_hostname();
// Physical cores hwloc sees (at least 1; falls back to processing units).
std::uint32_t local_core_count();

}  // namespace grove
