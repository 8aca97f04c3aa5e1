// One timer type: a libevent timer that owns its callback. Arm it (again)
// for a delay, cancel it, or let it go with its owner; firing runs the
// callback on the loop thread. Nothing else in grove needs to keep a
// std::function alive for libevent by hand. libevent stays in timer.cc:
// users see only an opaque `event_base*`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "os/event_ptr.h"

namespace grove {

class Timer {
 public:
  Timer() = default;  // fires never: assign one made with a base
  Timer(event_base* base, std::function<void()> fire);
  Timer(Timer&&) noexcept = default;
  Timer& operator=(Timer&&) noexcept = default;
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Fires once after `delay_ms` (0: on the loop's next pass); arming a
  // pending timer moves its deadline.
  void arm(std::int64_t delay_ms);
  // Fires every `interval_ms` until cancelled.
  void arm_every(std::int64_t interval_ms);
  void cancel();
  bool pending() const;
  // Made with a callback (armed or not).
  explicit operator bool() const { return fire_ != nullptr; }

 private:
  void add(std::int64_t delay_ms);

  event_base* base_ = nullptr;
  // Boxed: libevent holds its address, which must not move with the Timer.
  std::unique_ptr<std::function<void()>> fire_;
  EventPtr event_;
  bool repeating_ = false;
};

// A signal watched on the loop (SIGINT, SIGCHLD, ...): `fire` runs there.
// Watching ends when it goes (or is assigned an empty one).
class SignalWatch {
 public:
  SignalWatch() = default;
  SignalWatch(event_base* base, int signal_number, std::function<void()> fire);
  SignalWatch(SignalWatch&&) noexcept = default;
  SignalWatch& operator=(SignalWatch&&) noexcept = default;

 private:
  std::unique_ptr<std::function<void()>> fire_;
  EventPtr event_;
};

// Runs `fire` once on the loop, with no handle to keep: after `delay_ms`, or
// with 0 as soon as the callbacks running now return. Nothing cancels it, so
// `fire` checks that what it touches still exists (a weak_ptr); a loop freed
// before it fires never runs it.
void run_later(event_base* base, std::int64_t delay_ms, std::function<void()> fire);

}  // namespace grove
