#include "harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cerrno>

#include "rml/transport/handshake.h"
#include "util/standard_params.h"

namespace grove::testing {
namespace {

void tick(evutil_socket_t, short, void*) {}

timeval to_timeval(std::chrono::microseconds duration) {
  return timeval{static_cast<time_t>(duration.count() / 1'000'000),
                 static_cast<suseconds_t>(duration.count() % 1'000'000)};
}

}  // namespace

EventBasePtr make_base() {
  REQUIRE(enable_event_threads());
  EventBasePtr base(event_base_new());
  REQUIRE(base);
  return base;
}

bool run_until(event_base* base, const std::function<bool()>& done,
               std::chrono::milliseconds timeout) {
  // A ticking timer wakes the loop so done() is re-checked even when no
  // socket event arrives.
  EventPtr ticker(event_new(base, -1, EV_PERSIST, &tick, nullptr));
  timeval period = to_timeval(10ms);
  event_add(ticker.get(), &period);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    event_base_loop(base, EVLOOP_ONCE);
  }
  return true;
}

void run_for(event_base* base, std::chrono::milliseconds duration) {
  auto deadline = std::chrono::steady_clock::now() + duration;
  run_until(
      base, [deadline] { return std::chrono::steady_clock::now() >= deadline; }, duration + 1s);
}

std::vector<std::byte> test_secret(std::uint8_t fill) {
  std::vector<std::byte> secret(kDvmSecretSize);
  for (std::size_t i = 0; i < secret.size(); ++i) {
    secret[i] = static_cast<std::byte>(fill * 31 + i);
  }
  return secret;
}

std::vector<std::byte> make_frame(Vpid sender, std::uint16_t tag, TopologyKind topology,
                                  std::uint64_t op_id, std::size_t payload_size) {
  FrameHeader header;
  header.type = FrameType::control;
  header.tag = tag;
  header.topology = topology;
  header.op_id = op_id;
  header.sender = sender;
  header.origin = sender;
  std::vector<std::byte> payload(payload_size);
  for (std::size_t i = 0; i < payload_size; ++i) {
    payload[i] = static_cast<std::byte>((op_id * 7 + i * 13) & 0xFF);
  }
  return encode_frame(header, payload);
}

Node::Node(event_base* base, Vpid vpid, const NodeOptions& options)
    : vpid_(vpid), log_file_(std::tmpfile()) {
  REQUIRE(log_file_ != nullptr);
  register_standard_params(params_);
  REQUIRE(params_.set("rml_base_verbose", std::to_string(options.rml_verbose), ParamOrigin{}));
  log_ = std::make_unique<Log>("vpid " + std::to_string(vpid), params_, log_file_);

  TcpTransportConfig config;
  config.self = vpid;
  config.secret = options.secret;
  config.max_payload = options.max_payload;
  config.worker_threads = options.worker_threads;
  config.log = log_.get();
  config.handshake_timeout_ms = options.handshake_timeout_ms;
  config.protection = options.protection;
  config.send_queue_limit = options.send_queue_limit;
  config.send_queue_timeout_ms = options.send_queue_timeout_ms;
  TcpTransportCallbacks callbacks;
  callbacks.on_frame = [this](Vpid from, std::vector<std::byte> frame) {
    callback_threads.push_back(std::this_thread::get_id());
    if (on_frame_hook) on_frame_hook(from, frame);
    received.push_back(Received{from, std::move(frame)});
  };
  callbacks.on_peer_lost = [this](Vpid peer) {
    callback_threads.push_back(std::this_thread::get_id());
    lost.push_back(peer);
  };
  auto transport = TcpTransport::create(base, std::move(config), std::move(callbacks));
  REQUIRE(transport);
  transport_ = std::move(*transport);
  if (options.listen) {
    auto endpoint = transport_->listen("127.0.0.1", 0);
    REQUIRE(endpoint);
    REQUIRE(endpoint->port != 0);
    endpoint_ = *endpoint;
  }
}

Node::~Node() {
  transport_.reset();
  std::fclose(log_file_);
}

std::string Node::log_text() const {
  std::fflush(log_file_);
  std::rewind(log_file_);
  std::string text;
  char buffer[4096];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, log_file_)) {
    text.append(buffer, got);
  }
  std::fseek(log_file_, 0, SEEK_END);
  return text;
}

void connect_all(const std::vector<Node*>& nodes) {
  for (Node* node : nodes) {
    for (Node* other : nodes) {
      if (other != node) REQUIRE(node->transport().add_peer(other->vpid(), other->endpoint()));
    }
  }
}

RawClient::RawClient(const Endpoint& server) {
  auto address = to_socket_address(server);
  REQUIRE(address);
  fd_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(fd_.valid());
  // Completes from the listen backlog; the server accepts once its loop runs.
  REQUIRE(::connect(fd_.get(), address->get(), address->length) == 0);
}

void RawClient::write_bytes(std::span<const std::byte> bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t result =
        ::send(fd_.get(), bytes.data() + written, bytes.size() - written, MSG_NOSIGNAL);
    REQUIRE(result > 0);
    written += static_cast<std::size_t>(result);
  }
}

bool RawClient::poll_read() {
  if (closed_) return false;
  for (;;) {
    std::byte buffer[4096];
    ssize_t got = ::recv(fd_.get(), buffer, sizeof buffer, MSG_DONTWAIT);
    if (got > 0) {
      read_.insert(read_.end(), buffer, buffer + got);
      continue;
    }
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    closed_ = true;  // end of file, or reset by the server
    return false;
  }
}

std::string RawClient::local_address() const {
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  REQUIRE(::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&local), &length) == 0);
  return endpoint_of(reinterpret_cast<const sockaddr*>(&local), length).to_string();
}

}  // namespace grove::testing
