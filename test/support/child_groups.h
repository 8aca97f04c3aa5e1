// The process groups a test program has started and not yet ended. A test
// program killed by SIGTERM, SIGINT or SIGHUP (meson's timeout sends SIGTERM)
// never runs its destructors, so the DVMs its tests started would outlive
// it; its signal handler ends every registered group first (SIGTERM, then
// SIGKILL after up to three seconds, sent by a helper outside the test's
// group, which meson SIGKILLs half a second after its SIGTERM) and then dies
// of the same signal.
#pragma once

#include <sys/types.h>

namespace grove::test {

// fork() for a child that leads a process group of its own, tracked before
// any of the signals above can be handled (they wait meanwhile) on the
// calling thread; another thread could still take one in between. In the
// child (0), the group is made and the signal mask is the caller's.
pid_t fork_tracked_group();

// Both are async-signal-safe and lock-free; at most 256 groups at once (more
// are not tracked, and ended only by their owners).
void track_child_group(pid_t group);
void untrack_child_group(pid_t group);

}  // namespace grove::test
