// Accepts connections on a Unix stream socket from the loop (the control
// socket's listener). Each connection is handed over as an Fd, already
// non-blocking and close-on-exec, for a BufferedStream to own.
#pragma once

#include <functional>
#include <string>

#include "os/event_ptr.h"
#include "os/fd.h"
#include "util/result.h"

namespace grove {

class UnixListener {
 public:
  using AcceptFn = std::function<void(Fd connection)>;

  UnixListener() = default;  // listens nowhere
  UnixListener(UnixListener&&) noexcept = default;
  UnixListener& operator=(UnixListener&&) noexcept = default;
  // Binds `path` (which must not exist: a stale socket is the caller's to
  // remove) and listens with `backlog`. The Error is strerror's text alone,
  // for the caller to say what it was listening for.
  static Result<UnixListener> listen(event_base* base, const std::string& path, int backlog,
                                     AcceptFn accept);
  // Stops listening and closes the socket (the file stays: the caller's).
  void close() { listener_.reset(); }

 private:
  // Boxed: libevent holds its address, which must not move with the listener.
  std::unique_ptr<AcceptFn> accept_;
  ListenerPtr listener_;
};

}  // namespace grove
