#include "control/control_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "control/control_request.h"
#include "os/buffered_stream.h"
#include "os/timer.h"

namespace grove {

namespace {
constexpr std::size_t kMaxRequestBytes = kMaxControlLine;
// One request per connection. What a client sends after it is read and
// thrown away (so its end of the connection is still seen), up to this.
constexpr std::size_t kMaxAfterRequest = 4096;
}  // namespace

struct ControlServer::Client {
  std::uint64_t id = 0;
  BufferedStream stream;
  Timer deadline;  // until the request is in
  bool answered = false;
  bool closing = false;           // replied: closes once the reply is out
  std::size_t after_request = 0;  // bytes received since
};

ControlServer::ControlServer(std::string path, RequestHandler handler)
    : path_(std::move(path)), handler_(std::move(handler)) {}

Result<std::unique_ptr<ControlServer>> ControlServer::create(
    event_base* base, const std::string& path, RequestHandler handler,
    std::chrono::milliseconds request_timeout) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) {
    return Error{"control socket path too long for a Unix socket: " + path};
  }
  unlink(path.c_str());
  std::unique_ptr<ControlServer> server(new ControlServer(path, std::move(handler)));
  server->base_ = base;
  // The whole request must be in by then, however it trickles in: an idle
  // or slow client must not hold a slot (and memory) for ever.
  server->request_timeout_ms_ = request_timeout.count();
  auto listener = UnixListener::listen(base, path, 16, [raw = server.get()](Fd connection) {
    raw->on_accept(std::move(connection));
  });
  if (!listener) return Error{"cannot listen on " + path + ": " + listener.error().message};
  server->listener_ = std::move(*listener);
  return server;
}

ControlServer::~ControlServer() {
  *alive_ = false;
  clients_.clear();
  listener_.close();
  unlink(path_.c_str());
}

void ControlServer::on_accept(Fd connection) {
  auto client = std::make_unique<Client>();
  const std::uint64_t id = next_id_++;
  client->id = id;
  BufferedStream::Callbacks callbacks;
  Client* raw = client.get();
  callbacks.readable = [this, raw] { on_read(*raw); };
  callbacks.drained = [this, raw] {
    if (raw->closing) drop(raw->id);
  };
  callbacks.closed = [this, id] { drop(id); };
  client->stream = BufferedStream(base_, std::move(connection), std::move(callbacks));
  client->deadline = Timer(base_, [this, id] { drop(id); });
  client->deadline.arm(request_timeout_ms_);
  client->stream.enable_read();
  clients_[id] = std::move(client);
}

void ControlServer::on_read(Client& client) {
  if (client.answered) {
    client.after_request += client.stream.discard_input();
    if (client.after_request > kMaxAfterRequest) drop(client.id);
    return;
  }
  std::optional<std::string> text = client.stream.read_line();
  if (!text) {
    if (client.stream.input_size() > kMaxRequestBytes) drop(client.id);
    return;
  }
  client.answered = true;
  // The request is in; a job's output may stream back for as long as it runs.
  client.deadline = Timer();
  client.after_request = client.stream.discard_input();
  ReplyFn reply = reply_fn(client.id);
  PartialFn partial = partial_fn(client.id);
  auto request = parse_control_json(*text);
  if (!request) {
    reply(nlohmann::json{{"ok", false}, {"error", request.error().message}});
    return;
  }
  handler_(*request, reply, partial);
}

ReplyFn ControlServer::reply_fn(std::uint64_t id) {
  std::weak_ptr<bool> alive = alive_;
  return [this, id, alive](const nlohmann::json& answer) {
    if (alive.expired() || !*alive.lock()) return;
    auto found = clients_.find(id);
    if (found == clients_.end()) return;
    Client& client = *found->second;
    std::string out = answer.dump() + "\n";
    // Nothing more is read: the connection closes once the answer is out
    // (the stream says when its output has drained).
    client.stream.disable_read();
    client.stream.write(out);
    client.closing = true;
  };
}

PartialFn ControlServer::partial_fn(std::uint64_t id) {
  std::weak_ptr<bool> alive = alive_;
  return [this, id, alive](const nlohmann::json& message) -> std::optional<std::size_t> {
    if (alive.expired() || !*alive.lock()) return std::nullopt;
    auto found = clients_.find(id);
    if (found == clients_.end()) return std::nullopt;
    BufferedStream& stream = found->second->stream;
    if (!message.is_null()) {
      nlohmann::json line = message;
      line["partial"] = true;
      stream.write(line.dump() + "\n");
    }
    return stream.queued();
  };
}

void ControlServer::drop(std::uint64_t id) {
  clients_.erase(id);
}

namespace {

Result<Fd> connect_control(const std::string& socket_path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof address.sun_path) return Error{"socket path too long"};
  std::strncpy(address.sun_path, socket_path.c_str(), sizeof address.sun_path - 1);
  Fd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error{std::string("socket: ") + std::strerror(errno)};
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    return Error{"cannot reach the DVM controller at " + socket_path + ": " + std::strerror(errno)};
  }
  return fd;
}

Status write_all(int fd, const std::string& out) {
  for (std::size_t sent = 0; sent < out.size();) {
    ssize_t n = write(fd, out.data() + sent, out.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{std::string("write to the controller: ") + std::strerror(errno)};
    sent += static_cast<std::size_t>(n);
  }
  return ok_status();
}

// Reads lines until the final (non-partial) one; a negative timeout waits forever.
Result<nlohmann::json> read_replies(int fd, std::chrono::milliseconds timeout,
                                    const std::function<void(const nlohmann::json&)>& on_partial) {
  std::string in;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::size_t newline;
    while ((newline = in.find('\n')) != std::string::npos) {
      auto reply = nlohmann::json::parse(in.substr(0, newline), nullptr, false);
      in.erase(0, newline + 1);
      if (reply.is_discarded()) return Error{"the controller's answer is not JSON"};
      if (!reply.value("partial", false)) return reply;
      if (on_partial) on_partial(reply);
    }
    int wait_ms = -1;
    if (timeout.count() >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Error{"the controller did not answer in time"};
      wait_ms = static_cast<int>(left.count());
    }
    pollfd poll_fd{fd, POLLIN, 0};
    int ready = poll(&poll_fd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{"the controller closed the connection without an answer"};
    in.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace

Result<nlohmann::json> control_request(const std::string& socket_path,
                                       const nlohmann::json& request,
                                       std::chrono::milliseconds timeout) {
  auto fd = connect_control(socket_path);
  if (!fd) return fd.error();
  if (auto status = write_all(fd->get(), request.dump() + "\n"); !status) return status.error();
  return read_replies(fd->get(), timeout, nullptr);
}

Result<nlohmann::json> control_stream(
    const std::string& socket_path, const nlohmann::json& request,
    const std::function<void(const nlohmann::json&)>& on_partial) {
  auto fd = connect_control(socket_path);
  if (!fd) return fd.error();
  if (auto status = write_all(fd->get(), request.dump() + "\n"); !status) return status.error();
  return read_replies(fd->get(), std::chrono::milliseconds(-1), on_partial);
}
}  // namespace grove
