#include "os/timer.h"

#include <event2/event.h>

namespace grove {

namespace {

void on_fire(evutil_socket_t, short, void* arg) {
  // A copy: the callback may re-arm, reassign or destroy its owner.
  std::function<void()> fire = *static_cast<std::function<void()>*>(arg);
  fire();
}

timeval to_timeval(std::int64_t delay_ms) {
  if (delay_ms < 0) delay_ms = 0;
  return timeval{static_cast<time_t>(delay_ms / 1000),
                 static_cast<suseconds_t>((delay_ms % 1000) * 1000)};
}

}  // namespace

Timer::Timer(event_base* base, std::function<void()> fire)
    : base_(base), fire_(std::make_unique<std::function<void()>>(std::move(fire))) {}

void Timer::add(std::int64_t delay_ms) {
  timeval delay = to_timeval(delay_ms);
  event_add(event_.get(), &delay);
}

void Timer::arm(std::int64_t delay_ms) {
  if (!fire_) return;
  if (!event_ || repeating_) {
    event_.reset(event_new(base_, -1, 0, &on_fire, fire_.get()));
    repeating_ = false;
  }
  add(delay_ms);
}

void Timer::arm_every(std::int64_t interval_ms) {
  if (!fire_) return;
  event_.reset(event_new(base_, -1, EV_PERSIST, &on_fire, fire_.get()));
  repeating_ = true;
  add(interval_ms);
}

void Timer::cancel() {
  if (event_) event_del(event_.get());
}

bool Timer::pending() const {
  return event_ && event_pending(event_.get(), EV_TIMEOUT, nullptr) != 0;
}

SignalWatch::SignalWatch(event_base* base, int signal_number, std::function<void()> fire)
    : fire_(std::make_unique<std::function<void()>>(std::move(fire))) {
  event_.reset(evsignal_new(base, signal_number, &on_fire, fire_.get()));
  event_add(event_.get(), nullptr);
}

void run_later(event_base* base, std::int64_t delay_ms, std::function<void()> fire) {
  auto* boxed = new std::function<void()>(std::move(fire));
  timeval delay = to_timeval(delay_ms);
  // No timeout for 0: libevent makes the event active at once rather than
  // queueing it behind this pass's timeouts.
  event_base_once(
      base, -1, EV_TIMEOUT,
      [](evutil_socket_t, short, void* arg) {
        std::unique_ptr<std::function<void()>> owned(static_cast<std::function<void()>*>(arg));
        (*owned)();
      },
      boxed, delay_ms > 0 ? &delay : nullptr);
}

}  // namespace grove
