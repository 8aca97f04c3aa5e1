#include "launcher/sim_huge_pages.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "os/child_process.h"

namespace grove {
namespace {

constexpr const char* kTunables = "GLIBC_TUNABLES";
constexpr const char* kHugeTlb = "glibc.malloc.hugetlb=1";
constexpr const char* kMarker = "GROVE_SIM_REEXECUTED";

// The kernel's transparent-huge-page mode; "[never]" means madvise is ignored.
bool kernel_allows_huge_pages() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(mode)), std::istreambuf_iterator<char>());
  return !text.empty() && text.find("[never]") == std::string::npos;
}

}  // namespace

bool huge_pages_in_effect() {
  const char* tunables = std::getenv(kTunables);
  return tunables != nullptr && std::strstr(tunables, kHugeTlb) != nullptr;
}

bool sim_wants_huge_pages(const std::string& mode, std::uint64_t daemons) {
  if (mode == "on") return true;
  if (mode == "off") return false;
  return daemons >= kHugePagesFrom;
}

std::string reexec_with_huge_pages(const std::vector<std::string>& param_files) {
  const char* current = std::getenv(kTunables);
  const std::string tunables = current ? current : "";
  // Already set (by us before the exec, or by the user, who has the last word).
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return "";
  // Never twice, whatever the environment says after the exec (glibc drops
  // GLIBC_TUNABLES for a setuid or setcap binary).
  if (std::getenv(kMarker) != nullptr) return "";
  if (!kernel_allows_huge_pages()) return "the kernel's transparent huge pages are off";
  // This process has read its parameter files; the new one reads them again,
  // and a pipe (--param-file <(...)) would then be empty: its settings lost.
  for (const std::string& path : param_files) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
      return "parameter file '" + path + "' is not a regular file, and it is read only once";
    }
  }
  // This process's own argv, as the kernel holds it.
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (std::size_t at = 0; at < raw.size();) {
    const std::size_t end = raw.find('\0', at);
    args.push_back(raw.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  if (args.empty()) return "cannot read /proc/self/cmdline";
  const std::string value = tunables.empty() ? kHugeTlb : tunables + ":" + kHugeTlb;
  ::setenv(kTunables, value.c_str(), 1);
  ::setenv(kMarker, "1", 1);
  std::cout.flush();  // nothing is printed before this today; keep it that way safely
  std::fflush(nullptr);
  const std::string failed = reexec_self(args);
  // Still here: run as we are, with the environment as it was.
  if (current) {
    ::setenv(kTunables, tunables.c_str(), 1);
  } else {
    ::unsetenv(kTunables);
  }
  ::unsetenv(kMarker);
  return failed;
}

}  // namespace grove
