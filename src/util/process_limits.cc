#include "util/process_limits.h"

#include <sys/resource.h>

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

}  // namespace grove
