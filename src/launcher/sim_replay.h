// grove sim --replay DIR: the flight recordings of `grove status --dump DIR`
// replayed through fresh engines (sim/flight_replay.h).
#pragma once

#include <string>

namespace grove {

// 0: every daemon did as recorded and every invariant held; 1: a
// divergence or a problem (printed); 2: the recordings could not be read.
int run_sim_replay(const std::string& dir, bool json);

}  // namespace grove
