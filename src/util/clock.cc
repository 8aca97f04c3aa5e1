#include "util/clock.h"

#include <ctime>

namespace grove {

TimeNs monotonic_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<TimeNs>(now.tv_sec) * 1'000'000'000ULL + static_cast<TimeNs>(now.tv_nsec);
}

}  // namespace grove
