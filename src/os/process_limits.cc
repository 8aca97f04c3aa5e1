#include "os/process_limits.h"

#include <sys/resource.h>

#include <cerrno>

namespace grove {
namespace {
// Set once, before any thread or child exists; only read after.
rlimit original_limit{RLIM_INFINITY, RLIM_INFINITY};
bool raised = false;
}  // namespace

std::uint64_t raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit wanted = limit;
    wanted.rlim_cur = limit.rlim_max;
    // Best effort: with the old limit the daemon still works, for fewer peers.
    if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) {
      if (!raised) original_limit = limit;
      raised = true;
      limit = wanted;
    }
  }
  return limit.rlim_cur;
}

void restore_open_file_limit() {
  if (raised) setrlimit(RLIMIT_NOFILE, &original_limit);
}

std::uint64_t open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : limit.rlim_cur;
}

int restore_open_file_limit_of(pid_t child) {
  if (!raised) return 0;
  return prlimit(child, RLIMIT_NOFILE, &original_limit, nullptr) == 0 ? 0 : errno;
}

}  // namespace grove
