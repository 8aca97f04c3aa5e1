// The event loop a process runs (a daemon's, a test's): the one owner of an
// event_base. Everything else is handed the opaque `event_base*` from base()
// and frees its events before the loop goes.
#pragma once

#include <cstdint>
#include <string>

#include "os/event_ptr.h"

namespace grove {

class EventLoop {
 public:
  // A new base; with libevent's threading enabled first where the process
  // needs it (rml/transport's enable_event_threads).
  EventLoop();
  EventLoop(EventLoop&&) noexcept = default;
  EventLoop& operator=(EventLoop&&) noexcept = default;

  event_base* base() const { return base_.get(); }
  explicit operator bool() const { return base_ != nullptr; }
  // Runs callbacks until exit() or until nothing is left to wait for.
  void run();
  // Times run() has woken: one pass per return from waiting, running every
  // callback due then (and those they make due at once). What a fence costs
  // a daemon's loop is counted in these (docs/benchmarks.md).
  std::uint64_t passes() const { return passes_; }
  // run() returns once the callbacks running now are done; with a delay,
  // after `delay_ms` (what is due until then still runs).
  void exit(std::int64_t delay_ms = 0);

 private:
  EventBasePtr base_;
  std::uint64_t passes_ = 0;
};

// libevent's version, for `grove --version` (daemon/versions.cc).
std::string event_library_version();

}  // namespace grove
