#include "control/control_socket.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "control/control_request.h"

namespace grove {

namespace {
constexpr std::size_t kMaxRequestBytes = kMaxControlLine;
// One request per connection. What a client sends after it is read and
// thrown away (so its end of the connection is still seen), up to this.
constexpr std::size_t kMaxAfterRequest = 4096;
}  // namespace

struct ControlServer::Client {
  std::uint64_t id = 0;
  ControlServer* server = nullptr;
  BufferEventPtr bev;
  EventPtr deadline;  // until the request is in
  bool answered = false;
  std::size_t after_request = 0;  // bytes received since
};

ControlServer::ControlServer(std::string path, RequestHandler handler)
    : path_(std::move(path)), handler_(std::move(handler)) {}

Result<std::unique_ptr<ControlServer>> ControlServer::create(
    event_base* base, const std::string& path, RequestHandler handler,
    std::chrono::milliseconds request_timeout) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    return Error{"control socket path too long for a Unix socket: " + path};
  }
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  unlink(path.c_str());
  std::unique_ptr<ControlServer> server(new ControlServer(path, std::move(handler)));
  server->base_ = base;
  // The whole request must be in by then, however it trickles in: an idle
  // or slow client must not hold a slot (and memory) for ever.
  server->request_timeout_ =
      timeval{static_cast<time_t>(request_timeout.count() / 1000),
              static_cast<suseconds_t>(request_timeout.count() % 1000) * 1000};
  server->listener_.reset(evconnlistener_new_bind(
      base, &ControlServer::on_accept, server.get(), LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC,
      16, reinterpret_cast<sockaddr*>(&address), sizeof address));
  if (!server->listener_) {
    return Error{"cannot listen on " + path + ": " + std::strerror(errno)};
  }
  return server;
}

ControlServer::~ControlServer() {
  *alive_ = false;
  clients_.clear();
  listener_.reset();
  unlink(path_.c_str());
}

void ControlServer::on_accept(evconnlistener*, evutil_socket_t fd, sockaddr*, int, void* arg) {
  auto* server = static_cast<ControlServer*>(arg);
  auto client = std::make_unique<Client>();
  client->id = server->next_id_++;
  client->server = server;
  client->bev.reset(bufferevent_socket_new(server->base_, fd, BEV_OPT_CLOSE_ON_FREE));
  bufferevent_setcb(client->bev.get(), &ControlServer::on_read, nullptr, &ControlServer::on_event,
                    client.get());
  client->deadline.reset(event_new(
      server->base_, -1, 0,
      [](evutil_socket_t, short, void* arg) {
        auto* late = static_cast<Client*>(arg);
        late->server->drop(late->id);
      },
      client.get()));
  event_add(client->deadline.get(), &server->request_timeout_);
  bufferevent_enable(client->bev.get(), EV_READ);
  server->clients_[client->id] = std::move(client);
}

void ControlServer::on_read(bufferevent* bev, void* arg) {
  auto* client = static_cast<Client*>(arg);
  ControlServer* server = client->server;
  evbuffer* input = bufferevent_get_input(bev);
  if (client->answered) {
    client->after_request += evbuffer_get_length(input);
    evbuffer_drain(input, evbuffer_get_length(input));
    if (client->after_request > kMaxAfterRequest) server->drop(client->id);
    return;
  }
  size_t length = 0;
  char* line = evbuffer_readln(input, &length, EVBUFFER_EOL_LF);
  if (line == nullptr) {
    if (evbuffer_get_length(input) > kMaxRequestBytes) server->drop(client->id);
    return;
  }
  std::string text(line, length);
  std::free(line);
  client->answered = true;
  // The request is in; a job's output may stream back for as long as it runs.
  client->deadline.reset();
  client->after_request = evbuffer_get_length(input);
  evbuffer_drain(input, client->after_request);
  std::uint64_t id = client->id;
  std::weak_ptr<bool> alive = server->alive_;
  ReplyFn reply = [server, id, alive](const nlohmann::json& answer) {
    if (alive.expired() || !*alive.lock()) return;
    auto found = server->clients_.find(id);
    if (found == server->clients_.end()) return;
    std::string out = answer.dump() + "\n";
    // Nothing more is read: the connection closes once the answer is out.
    bufferevent_disable(found->second->bev.get(), EV_READ);
    bufferevent_write(found->second->bev.get(), out.data(), out.size());
    // Close once written: the write callback fires when the output drains.
    bufferevent_setcb(
        found->second->bev.get(), nullptr,
        [](bufferevent* done, void* client_arg) {
          auto* c = static_cast<Client*>(client_arg);
          if (evbuffer_get_length(bufferevent_get_output(done)) == 0) {
            c->server->drop(c->id);
          }
        },
        &ControlServer::on_event, found->second.get());
  };
  PartialFn partial = [server, id,
                       alive](const nlohmann::json& message) -> std::optional<std::size_t> {
    if (alive.expired() || !*alive.lock()) return std::nullopt;
    auto found = server->clients_.find(id);
    if (found == server->clients_.end()) return std::nullopt;
    bufferevent* bev = found->second->bev.get();
    if (!message.is_null()) {
      nlohmann::json line = message;
      line["partial"] = true;
      std::string out = line.dump() + "\n";
      bufferevent_write(bev, out.data(), out.size());
    }
    return evbuffer_get_length(bufferevent_get_output(bev));
  };
  auto request = parse_control_json(text);
  if (!request) {
    reply(nlohmann::json{{"ok", false}, {"error", request.error().message}});
    return;
  }
  server->handler_(*request, reply, partial);
}

void ControlServer::on_event(bufferevent*, short events, void* arg) {
  auto* client = static_cast<Client*>(arg);
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
    client->server->drop(client->id);
  }
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
