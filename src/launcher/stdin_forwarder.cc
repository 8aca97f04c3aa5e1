#include "launcher/stdin_forwarder.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <vector>

#include "control/control_request.h"
#include "control/control_socket.h"
#include "util/base64.h"

namespace grove {

StdinForwarder::~StdinForwarder() {
  stop();
}

bool StdinForwarder::readable_here() {
  // Closed (`<&-`): descriptor 0 may later be the DVM's socket, not input.
  if (fcntl(STDIN_FILENO, F_GETFD) < 0) return false;
  if (!isatty(STDIN_FILENO)) return true;
  return tcgetpgrp(STDIN_FILENO) == getpgrp();
}

void StdinForwarder::start(std::string socket_path, std::uint32_t job) {
  if (thread_.joinable()) return;
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return;
  stop_read_ = Fd(ends[0]);
  stop_write_ = Fd(ends[1]);
  thread_ =
      std::thread([this, socket_path = std::move(socket_path), job] { forward(socket_path, job); });
}

void StdinForwarder::stop() {
  if (!thread_.joinable()) return;
  const char stop = 1;
  (void)!write(stop_write_.get(), &stop, 1);
  thread_.join();
}

void StdinForwarder::forward(const std::string& socket_path, std::uint32_t job) {
  std::vector<char> buffer(kMaxStdinChunk);
  for (;;) {
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;  // the job is over
    const ssize_t got = read(STDIN_FILENO, buffer.data(), buffer.size());
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    const bool eof = got <= 0;
    nlohmann::json request{{"cmd", "stdin"}, {"job", job}, {"eof", eof}};
    if (!eof)
      request["data"] = to_base64(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    // Answered once the ranks have it, or the job is gone: no deadline.
    auto reply = control_request(socket_path, request, std::chrono::milliseconds(-1));
    if (eof || !reply || !reply->value("ok", false) || !reply->value("open", false)) return;
  }
}

}  // namespace grove
