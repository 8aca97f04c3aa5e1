#include "os/event_loop.h"

#include <event2/event.h>

namespace grove {

EventLoop::EventLoop() : base_(event_base_new()) {}

void EventLoop::run() {
  // One pass at a time (what event_base_dispatch does, counted): EVLOOP_ONCE
  // waits for something due, runs it and whatever it made active, returns.
  event_base* base = base_.get();
  for (;;) {
    if (event_base_loop(base, EVLOOP_ONCE) != 0) return;  // nothing to wait for, or an error
    ++passes_;
    if (event_base_got_exit(base) || event_base_got_break(base)) return;
  }
}

void EventLoop::exit(std::int64_t delay_ms) {
  if (delay_ms <= 0) {
    event_base_loopexit(base_.get(), nullptr);
    return;
  }
  timeval delay{static_cast<time_t>(delay_ms / 1000),
                static_cast<suseconds_t>((delay_ms % 1000) * 1000)};
  event_base_loopexit(base_.get(), &delay);
}

std::string event_library_version() {
  const char* version = event_get_version();
  return version != nullptr ? version : "unknown";
}

}  // namespace grove
