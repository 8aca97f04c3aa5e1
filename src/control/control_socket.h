// The CLI's line to a running controller: a Unix socket in the DVM's 0700
// session directory, one JSON request per line, one JSON reply per line.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "os/event_ptr.h"
#include "os/unix_listener.h"
#include "util/result.h"

namespace grove {

using ReplyFn = std::function<void(const nlohmann::json& reply)>;
// A refused request's reply: {"ok": false, "error": message}.
inline nlohmann::json error_reply(const std::string& message) {
  return {{"ok", false}, {"error", message}};
}
// Sends one partial line (a job's output) and returns the bytes still queued
// to the client, nothing once it is gone; a null message sends nothing and
// only reports (the sender's flow control asks this).
using PartialFn = std::function<std::optional<std::size_t>(const nlohmann::json& message)>;
// May reply at once or later (after gathering from daemons); must reply once.
// Before that it may send any number of partial lines: each goes out as one
// line with "partial": true, and the connection stays open.
using RequestHandler =
    std::function<void(const nlohmann::json& request, ReplyFn reply, PartialFn partial)>;

class ControlServer {
 public:
  // `request_timeout`: how long a client has to send its whole request
  // line, however it trickles in.
  static Result<std::unique_ptr<ControlServer>> create(
      event_base* base, const std::string& path, RequestHandler handler,
      std::chrono::milliseconds request_timeout = std::chrono::seconds(10));
  // Connections open now (waiting for a request, or for their answer).
  std::size_t clients() const { return clients_.size(); }
  ~ControlServer();
  const std::string& path() const { return path_; }

 private:
  struct Client;
  ControlServer(std::string path, RequestHandler handler);
  void on_accept(Fd connection);
  void on_read(Client& client);
  // The reply and partial functions a request's handler gets for client `id`.
  ReplyFn reply_fn(std::uint64_t id);
  PartialFn partial_fn(std::uint64_t id);
  void drop(std::uint64_t id);

  std::string path_;
  RequestHandler handler_;
  UnixListener listener_;
  event_base* base_ = nullptr;
  std::int64_t request_timeout_ms_ = 10'000;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Client>> clients_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Sends one request and waits for its reply (blocking, bounded by timeout).
Result<nlohmann::json> control_request(const std::string& socket_path,
                                       const nlohmann::json& request,
                                       std::chrono::milliseconds timeout);
// The same for a streaming request: every partial line goes to `on_partial`
// as it arrives; waits for the final reply as long as the controller lives.
Result<nlohmann::json> control_stream(const std::string& socket_path, const nlohmann::json& request,
                                      const std::function<void(const nlohmann::json&)>& on_partial);

}  // namespace grove
