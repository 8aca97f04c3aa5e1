// The open-descriptor limit: raised for a daemon, put back for what it starts.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace grove {

// Raises the soft limit on open descriptors to the hard limit and remembers
// the old one. A daemon holds one socket per peer, three pipes per launch in
// flight (ssh, srun) and two per local rank: a controller starting hundreds
// of hosts flat would run out at the common default of 1024. Returns the
// soft limit in force.
std::uint64_t raise_open_file_limit();

// In a forked child before exec: the soft limit it would have had without
// the raise (some programs loop over or size tables by it). Async-signal-safe.
void restore_open_file_limit();
// The soft limit on open descriptors in force now (0: unknown).
std::uint64_t open_file_limit();

// The same for a child that has not exec'd its program yet, from the parent
// (prlimit); returns an errno, 0 when done or nothing to undo.
int restore_open_file_limit_of(pid_t child);

}  // namespace grove
