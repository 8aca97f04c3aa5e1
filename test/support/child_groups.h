// The process groups a test program has started and not yet ended. A test
// program killed by SIGTERM, SIGINT or SIGHUP (meson's timeout sends SIGTERM)
// never runs its destructors, so the DVMs its tests started would outlive
// it; its signal handler ends every registered group first (SIGTERM, up to
// three seconds, then SIGKILL) and then dies of the same signal.
#pragma once

#include <sys/types.h>

namespace grove::test {

// Both are async-signal-safe and lock-free; at most 256 groups at once (more
// are not tracked, and ended only by their owners).
void track_child_group(pid_t group);
void untrack_child_group(pid_t group);

}  // namespace grove::test
