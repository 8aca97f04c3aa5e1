// Watches one fd for read or write readiness on the loop and owns the
// callback it runs then. The layers above the drivers read and write their
// pipes and sockets themselves; this is all they need of libevent. The fd
// stays the caller's: the watch neither makes it non-blocking nor closes it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "os/event_ptr.h"

namespace grove {

enum class IoReady : std::uint8_t { read, write };
// `persist`: fires each time the fd is ready, while enabled; `once`: fires
// once per enable() and is disabled by firing.
enum class IoRepeat : std::uint8_t { once, persist };

class IoWatch {
 public:
  IoWatch() = default;  // watches nothing: assign one made with a base
  // Made disabled: nothing fires before enable().
  IoWatch(event_base* base, int fd, IoReady ready, IoRepeat repeat, std::function<void()> fire);
  IoWatch(IoWatch&&) noexcept = default;
  IoWatch& operator=(IoWatch&&) noexcept = default;
  IoWatch(const IoWatch&) = delete;
  IoWatch& operator=(const IoWatch&) = delete;
  ~IoWatch() = default;  // the event goes with it (EventPtr), removed if pending

  void enable();
  void disable();
  bool enabled() const;
  int fd() const { return fd_; }
  // Made with a base and a callback.
  explicit operator bool() const { return event_ != nullptr; }

 private:
  int fd_ = -1;
  // Boxed: libevent holds its address, which must not move with the watch.
  std::unique_ptr<std::function<void()>> fire_;
  EventPtr event_;
};

// Makes `fd` non-blocking, as every watched fd read or written in a loop
// must be; false if fcntl fails.
bool set_nonblocking(int fd);

}  // namespace grove
