#include "os/io_watch.h"

#include <event2/event.h>

namespace grove {

namespace {

void on_ready(evutil_socket_t, short, void* arg) {
  // A copy: the callback may disable, reassign or destroy its watch.
  std::function<void()> fire = *static_cast<std::function<void()>*>(arg);
  fire();
}

}  // namespace

IoWatch::IoWatch(event_base* base, int fd, IoReady ready, IoRepeat repeat,
                 std::function<void()> fire)
    : fd_(fd), fire_(std::make_unique<std::function<void()>>(std::move(fire))) {
  short what = ready == IoReady::read ? EV_READ : EV_WRITE;
  if (repeat == IoRepeat::persist) what |= EV_PERSIST;
  event_.reset(event_new(base, fd, what, &on_ready, fire_.get()));
}

void IoWatch::enable() {
  if (event_) event_add(event_.get(), nullptr);
}

void IoWatch::disable() {
  if (event_) event_del(event_.get());
}

bool IoWatch::enabled() const {
  return event_ && event_pending(event_.get(), EV_READ | EV_WRITE, nullptr) != 0;
}

bool set_nonblocking(int fd) {
  return evutil_make_socket_nonblocking(fd) == 0;
}

}  // namespace grove
