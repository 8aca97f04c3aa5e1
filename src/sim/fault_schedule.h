// A run's random fault schedule: which daemons die, how and when, drawn from
// the run's fault stream and spread over the time its rounds should take
// (by the release cost model), so faults land while fences run.
#pragma once

#include <vector>

#include "sim/simulator.h"
#include "util/random_stream.h"

namespace grove {

// The time the run's rounds should take, by the cost model, with room to
// spare: random deaths and joins are spread over it.
TimeNs fault_horizon_ns(const SimOptions& options);

// `options.random_faults` faults (at most one per daemon, never the
// controller), each at a time, on a release, or while holding one.
std::vector<FaultSpec> draw_faults(const SimOptions& options, RandomStream& faults);

}  // namespace grove
