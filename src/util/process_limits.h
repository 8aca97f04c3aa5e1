// The open-descriptor limit: raised for a daemon, put back for what it starts.
#pragma once

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

}  // namespace grove
