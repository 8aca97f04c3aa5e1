#include "os/unix_listener.h"

#include <event2/listener.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace grove {

Result<UnixListener> UnixListener::listen(event_base* base, const std::string& path, int backlog,
                                          AcceptFn accept) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return Error{std::strerror(ENAMETOOLONG)};
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  UnixListener listener;
  listener.accept_ = std::make_unique<AcceptFn>(std::move(accept));
  // libevent accepts in a loop, with the new socket non-blocking and, by
  // LEV_OPT_CLOSE_ON_EXEC, close-on-exec.
  listener.listener_.reset(evconnlistener_new_bind(
      base,
      [](evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* arg) {
        // A copy: accepting may close this listener.
        AcceptFn accept = *static_cast<AcceptFn*>(arg);
        accept(Fd(fd));
      },
      listener.accept_.get(), LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, backlog,
      reinterpret_cast<sockaddr*>(&address), sizeof address));
  if (!listener.listener_) return Error{std::strerror(errno)};
  return listener;
}

}  // namespace grove
