// The one place grove reads the time. Engines never call this: drivers do,
// and hand `now` in.
#pragma once

#include <cstdint>

namespace grove {

using TimeNs = std::uint64_t;

// CLOCK_MONOTONIC in nanoseconds: comparable between processes on one host.
TimeNs monotonic_now_ns();

}  // namespace grove
