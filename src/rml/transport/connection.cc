#include "rml/transport/connection.h"

#include <event2/buffer.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "rml/frame.h"

namespace grove {
namespace {

// Frames at least this large are handed to the output buffer by reference
// (freed once written) instead of being copied into it.
constexpr std::size_t kReferenceFrameBytes = 64 * 1024;
constexpr std::size_t kSingleReadWriteBytes = 1024 * 1024;

void set_nodelay(int fd) {
  int one = 1;
  // Best effort: a socket without TCP_NODELAY still works, only slower.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_link_timeout(int fd, std::uint32_t ms) {
  if (ms == 0) return;
  unsigned int value = ms;
  // Best effort: without it a dead link is found by the kernel's retries.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &value, sizeof value);
}

std::string socket_error_text() {
  int error = EVUTIL_SOCKET_ERROR();
  return error == 0 ? std::string("unknown error") : std::string(std::strerror(error));
}

void release_frame(const void*, size_t, void* frame) {
  delete static_cast<std::vector<std::byte>*>(frame);
}

}  // namespace

Connection::Connection(TransportLoop& loop, ConnectionId id, const Endpoint& remote,
                       Handshake handshake)
    : loop_(loop), id_(id), remote_(remote), handshake_(std::move(handshake)) {}

Result<std::unique_ptr<Connection>> Connection::accept(TransportLoop& loop, ConnectionId id, Fd fd,
                                                       const Endpoint& remote) {
  const LoopSettings& settings = loop.settings();
  set_nodelay(fd.get());
  set_link_timeout(fd.get(), settings.link_timeout_ms);
  std::unique_ptr<Connection> connection(new Connection(
      loop, id, remote,
      Handshake::acceptor(settings.self, settings.secret, random_handshake_nonce())));
  connection->connected_ = true;
  if (auto attached = connection->attach(std::move(fd)); !attached) return attached.error();
  return connection;
}

Result<std::unique_ptr<Connection>> Connection::connect(TransportLoop& loop, ConnectionId id,
                                                        Vpid peer, const Endpoint& remote,
                                                        const SocketAddress& address) {
  const LoopSettings& settings = loop.settings();
  Fd fd(::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error{std::string("socket: ") + std::strerror(errno)};
  set_nodelay(fd.get());
  set_link_timeout(fd.get(), settings.link_timeout_ms);
  std::unique_ptr<Connection> connection(new Connection(
      loop, id, remote,
      Handshake::connector(settings.self, peer, settings.secret, random_handshake_nonce())));
  connection->dialled_ = peer;
  if (auto attached = connection->attach(std::move(fd)); !attached) return attached.error();
  bufferevent* bev = connection->bev_.get();
  if (bufferevent_socket_connect(bev, address.get(), static_cast<int>(address.length)) != 0) {
    return Error{"connect failed: " + socket_error_text()};
  }
  // Queued until the socket is connected.
  std::vector<std::byte> hello = connection->handshake_.start();
  if (bufferevent_write(bev, hello.data(), hello.size()) != 0) {
    return Error{"cannot queue the handshake HELLO"};
  }
  return connection;
}

Status Connection::attach(Fd fd) {
  bufferevent* bev = bufferevent_socket_new(loop_.base(), fd.get(), BEV_OPT_CLOSE_ON_FREE);
  if (bev == nullptr) return Error{"cannot create a bufferevent"};
  fd.release();  // the bufferevent closes it now
  bev_.reset(bev);
  bufferevent_setcb(bev, &Connection::on_read, &Connection::on_written, &Connection::on_event,
                    this);
  // on_written runs once the output has drained to the send queue's limit.
  bufferevent_setwatermark(bev, EV_WRITE, loop_.settings().send_queue_limit, 0);
  // libevent moves at most 16 KiB per read or write by default: a 256 KiB
  // fence release then costs sixteen wake-ups on each side. Larger steps let
  // the kernel's socket buffer set the pace.
  (void)bufferevent_set_max_single_read(bev, kSingleReadWriteBytes);
  (void)bufferevent_set_max_single_write(bev, kSingleReadWriteBytes);
  if (bufferevent_enable(bev, EV_READ | EV_WRITE) != 0) return Error{"cannot enable the socket"};

  handshake_timer_.reset(event_new(loop_.base(), -1, 0, &Connection::on_handshake_timeout, this));
  if (!handshake_timer_) return Error{"cannot create the handshake timer"};
  std::uint32_t timeout_ms = loop_.settings().handshake_timeout_ms;
  timeval timeout{static_cast<time_t>(timeout_ms / 1000),
                  static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
  if (event_add(handshake_timer_.get(), &timeout) != 0) {
    return Error{"cannot arm the handshake timer"};
  }
  return ok_status();
}

std::string Connection::describe() const {
  if (outgoing()) return "vpid " + std::to_string(dialled_) + " at " + remote_.to_string();
  if (auto peer = handshake_.peer()) {
    return "vpid " + std::to_string(*peer) + " from " + remote_.to_string();
  }
  return "unauthenticated peer " + remote_.to_string();
}

Status Connection::send(std::vector<std::byte> frame) {
  if (!handshake_.established()) {
    pending_bytes_ += frame.size();
    pending_.push_back(std::move(frame));
  } else if (auto written = write_frame(std::move(frame)); !written) {
    return written;
  }
  return check_send_queue();
}

std::uint64_t Connection::queued_bytes() const {
  return pending_bytes_ + evbuffer_get_length(bufferevent_get_output(bev_.get()));
}

Status Connection::check_send_queue() {
  const LoopSettings& settings = loop_.settings();
  const std::uint64_t queued = queued_bytes();
  if (queued <= settings.send_queue_limit) {
    queue_timer_.reset();
    return ok_status();
  }
  if (queued > 2 * settings.send_queue_limit) {
    return Error{"the send queue holds " + std::to_string(queued) +
                 " bytes, over twice rml_send_queue_limit (" +
                 std::to_string(settings.send_queue_limit) + "): the peer is not reading"};
  }
  if (!queue_timer_) {
    queue_timer_.reset(event_new(loop_.base(), -1, 0, &Connection::on_queue_timeout, this));
    if (!queue_timer_) return Error{"cannot create the send queue timer"};
    const std::uint32_t ms = settings.send_queue_timeout_ms;
    timeval timeout{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
    if (event_add(queue_timer_.get(), &timeout) != 0)
      return Error{"cannot arm the send queue timer"};
  }
  return ok_status();
}

void Connection::on_written(bufferevent*, void* arg) {
  // The socket took enough that the output is at or under the limit again.
  auto* self = static_cast<Connection*>(arg);
  if (self->queue_timer_ && self->queued_bytes() <= self->loop_.settings().send_queue_limit)
    self->queue_timer_.reset();
}

void Connection::on_queue_timeout(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  const LoopSettings& settings = self->loop_.settings();
  const std::uint64_t queued = self->queued_bytes();
  if (queued <= settings.send_queue_limit) {
    self->queue_timer_.reset();
    return;
  }
  self->close_with(
      CloseSeverityKind::error,
      "the send queue held " + std::to_string(queued) + " bytes, over rml_send_queue_limit (" +
          std::to_string(settings.send_queue_limit) + "), for " +
          std::to_string(settings.send_queue_timeout_ms) + " ms: the peer is not reading");
}

std::size_t Connection::write_now(std::span<const std::byte> frame) {
  // Only with nothing queued: bytes already in the output go first.
  if (evbuffer_get_length(bufferevent_get_output(bev_.get())) != 0) return 0;
  const ssize_t sent = ::send(bufferevent_getfd(bev_.get()), frame.data(), frame.size(),
                              MSG_DONTWAIT | MSG_NOSIGNAL);
  // A full socket or an error: the bufferevent writes the rest, and reports
  // an error on its own write attempt (closing this connection as before).
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

Status Connection::write_frame(std::vector<std::byte> frame) {
  outbound_->seal(frame);
  // Most frames fit the socket at once: sent here, a frame costs one send()
  // instead of arming the write event, waking for it, writing and disarming.
  const std::size_t sent = write_now(frame);
  if (sent == frame.size()) return ok_status();
  evbuffer* output = bufferevent_get_output(bev_.get());
  const std::size_t rest = frame.size() - sent;
  if (rest < kReferenceFrameBytes) {
    if (evbuffer_add(output, frame.data() + sent, rest) != 0) {
      return Error{"cannot queue a frame of " + std::to_string(rest) + " bytes"};
    }
    return ok_status();
  }
  auto owned = std::make_unique<std::vector<std::byte>>(std::move(frame));
  if (evbuffer_add_reference(output, owned->data() + sent, rest, &release_frame, owned.get()) !=
      0) {
    return Error{"cannot queue a frame of " + std::to_string(rest) + " bytes"};
  }
  owned.release();  // release_frame frees it once the bytes are written (or dropped)
  return ok_status();
}

void Connection::close_with(CloseSeverityKind severity, const std::string& reason) {
  // `this` is destroyed inside loop_.close(); copy what it needs first.
  TransportLoop& loop = loop_;
  loop.close(id_, severity, "closing connection with " + describe() + ": " + reason);
}

void Connection::on_read(bufferevent*, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  Status status = self->handshake_.established() ? self->read_frames() : self->read_handshake();
  if (!status) self->close_with(CloseSeverityKind::error, status.error().message);
}

void Connection::on_event(bufferevent*, short what, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  if (what & BEV_EVENT_CONNECTED) {
    self->connected_ = true;
    self->loop_.settings().log->verbose("rml", 3, "connected to %s", self->describe().c_str());
    return;
  }
  if (what & BEV_EVENT_ERROR) {
    std::string phase = self->connected_ ? "socket error: " : "connect failed: ";
    self->close_with(CloseSeverityKind::error, phase + socket_error_text());
    return;
  }
  if (what & BEV_EVENT_EOF) {
    if (self->handshake_.established()) {
      self->close_with(CloseSeverityKind::notice, "closed by the peer");
    } else {
      self->close_with(CloseSeverityKind::error,
                       "closed by the peer during the handshake (does it hold this DVM's secret?)");
    }
  }
}

void Connection::on_handshake_timeout(evutil_socket_t, short, void* arg) {
  auto* self = static_cast<Connection*>(arg);
  self->close_with(CloseSeverityKind::error,
                   "handshake timed out after " +
                       std::to_string(self->loop_.settings().handshake_timeout_ms) + " ms");
}

Status Connection::read_handshake() {
  evbuffer* input = bufferevent_get_input(bev_.get());
  while (!handshake_.established()) {
    std::size_t needed = handshake_.next_message_size();
    if (needed == 0) return Error{"handshake is not expecting data"};
    if (evbuffer_get_length(input) < needed) return ok_status();
    std::vector<std::byte> message(needed);
    if (evbuffer_remove(input, message.data(), needed) != static_cast<int>(needed)) {
      return Error{"cannot read a handshake message"};
    }
    auto reply = handshake_.receive(message);
    if (!reply) return Error{"handshake failed: " + reply.error().message};
    if (!reply->empty() && bufferevent_write(bev_.get(), reply->data(), reply->size()) != 0) {
      return Error{"cannot queue a handshake reply"};
    }
  }
  if (auto completed = complete_handshake(); !completed) return completed;
  return read_frames();
}

Status Connection::complete_handshake() {
  handshake_timer_.reset();
  const FrameProtection protection = loop_.settings().protection;
  {
    FrameKeys keys = handshake_.frame_keys(protection);
    outbound_ = std::make_unique<FrameSeal>(protection, keys.send, kFrameHeaderSize);
    inbound_ = std::make_unique<FrameSeal>(protection, keys.receive, kFrameHeaderSize);
  }
  loop_.settings().log->verbose("rml", 1, "authenticated %s (frames: %s)", describe().c_str(),
                                std::string(frame_protection_name(protection)).c_str());
  loop_.notify_main(PeerAuthenticated{id_, *handshake_.peer(), loop_.index(), outgoing()});
  std::vector<std::vector<std::byte>> pending;
  pending.swap(pending_);
  pending_bytes_ = 0;
  for (std::vector<std::byte>& frame : pending) {
    if (auto written = write_frame(std::move(frame)); !written) return written;
  }
  return ok_status();
}

Status Connection::read_frames() {
  evbuffer* input = bufferevent_get_input(bev_.get());
  const Vpid peer = *handshake_.peer();
  const std::uint64_t max_payload = loop_.settings().max_payload;
  std::vector<MainEvent> arrived;
  Status status = ok_status();
  std::size_t wanted = 0;  // bytes of a partial frame, for the read watermark
  for (;;) {
    std::size_t available = evbuffer_get_length(input);
    if (available < kFrameHeaderSize) break;
    const auto* head = reinterpret_cast<const std::byte*>(evbuffer_pullup(input, kFrameHeaderSize));
    auto header = decode_frame_header({head, kFrameHeaderSize}, max_payload);
    if (!header) {
      status = Error{"bad frame: " + header.error().message};
      break;
    }
    if (header->sender != peer) {
      status = Error{"bad frame: sender field says vpid " + std::to_string(header->sender) +
                     " on a connection authenticated as vpid " + std::to_string(peer)};
      break;
    }
    std::size_t total = kFrameHeaderSize + header->payload_length + inbound_->overhead();
    if (available < total) {
      wanted = total;
      break;
    }
    FrameArrived frame{id_, peer, header->tag, header->topology, std::vector<std::byte>(total)};
    // evbuffer_copyout counts in ssize_t (evbuffer_remove in int, too small for big frames).
    if (evbuffer_copyout(input, frame.bytes.data(), total) != static_cast<ev_ssize_t>(total) ||
        evbuffer_drain(input, total) != 0) {
      status = Error{"cannot read a frame of " + std::to_string(total) + " bytes"};
      break;
    }
    if (auto opened = inbound_->open(frame.bytes); !opened) {
      status = opened;
      break;
    }
    arrived.emplace_back(std::move(frame));
  }
  // Frames before a bad one were good: they are delivered, then the close.
  if (!arrived.empty()) loop_.notify_main(std::move(arrived));
  if (status && wanted != read_low_watermark_) {
    // Wake again only once the whole frame is here, not for every chunk.
    bufferevent_setwatermark(bev_.get(), EV_READ, wanted, 0);
    read_low_watermark_ = wanted;
  }
  return status;
}

}  // namespace grove
