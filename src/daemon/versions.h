// What this build is and what it runs on: grove's version and git revision,
// and the versions of the libraries that decide its behaviour, as loaded at
// run time (not as compiled against: a different libpmix.so can be found
// first). For --version and `grove info`.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace grove {

// `git describe --always --dirty` of the source tree built, or "unknown".
const char* build_revision();

// ("libpmix", "OpenPMIx 4.2.2 ..."), ("libevent", ...), ("hwloc", ...).
std::vector<std::pair<std::string, std::string>> library_versions();

// "PROGRAM VERSION (git REVISION)" and one "  LIBRARY: VERSION" line each.
std::string version_text(const std::string& program);

}  // namespace grove
