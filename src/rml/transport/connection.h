// Internal to the transport: one TCP connection with one peer, living on one
// TransportLoop and touched only by that loop's thread. It runs the handshake
// (connector or acceptor), then splits the byte stream into frames. Frames
// handed to send() before the handshake completes wait in order and are
// written right after it. Nothing the peer sends is acted upon before it has
// authenticated, and after the handshake every frame carries a tag under
// this connection's keys (frame_seal.h).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "os/event_handles.h"
#include "rml/transport/endpoint.h"
#include "rml/transport/handshake.h"
#include "rml/transport/transport_loop.h"
#include "util/result.h"

namespace grove {

class Connection {
 public:
  // Takes over an accepted socket and waits for the peer's HELLO.
  static Result<std::unique_ptr<Connection>> accept(TransportLoop& loop, ConnectionId id, Fd fd,
                                                    const Endpoint& remote);
  // Dials peer at address and sends HELLO once connected.
  static Result<std::unique_ptr<Connection>> connect(TransportLoop& loop, ConnectionId id,
                                                     Vpid peer, const Endpoint& remote,
                                                     const SocketAddress& address);
  ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writes the frame, or queues it until the handshake completes. An Error
  // means the connection could not take it and must be closed.
  Status send(std::vector<std::byte> frame);

  bool outgoing() const { return handshake_.role() == HandshakeRole::connector; }
  bool authenticated() const { return handshake_.established(); }
  // "vpid 3 at 127.0.0.1:5000 (outgoing)" or "127.0.0.1:40112 (incoming)".
  std::string describe() const;

 private:
  Connection(TransportLoop& loop, ConnectionId id, const Endpoint& remote, Handshake handshake);
  // Wraps fd in a bufferevent (which then owns it) and arms the handshake timer.
  Status attach(Fd fd);

  static void on_read(bufferevent* bev, void* arg);
  static void on_written(bufferevent* bev, void* arg);
  static void on_queue_timeout(evutil_socket_t fd, short what, void* arg);
  static void on_event(bufferevent* bev, short what, void* arg);
  static void on_handshake_timeout(evutil_socket_t fd, short what, void* arg);

  Status read_handshake();
  Status read_frames();
  Status complete_handshake();
  Status write_frame(std::vector<std::byte> frame);
  // Sends what the socket takes now if nothing is queued; returns the bytes sent.
  std::size_t write_now(std::span<const std::byte> frame);
  // Bytes waiting for the handshake or for the socket.
  std::uint64_t queued_bytes() const;
  // Keeps the send queue's bound: an Error past twice the limit; the
  // over-limit timer armed above it, disarmed at or below it.
  Status check_send_queue();
  // Closes with the reason; the object is gone when this returns.
  void close_with(CloseSeverityKind severity, const std::string& reason);

  TransportLoop& loop_;
  ConnectionId id_;
  Endpoint remote_;
  Vpid dialled_ = 0;  // outgoing: the vpid this connection was opened to
  Handshake handshake_;
  BufferEventPtr bev_;
  EventPtr handshake_timer_;
  std::vector<std::vector<std::byte>> pending_;  // frames waiting for the handshake
  std::uint64_t pending_bytes_ = 0;
  EventPtr queue_timer_;  // armed while the send queue is over its limit
  // Once authenticated: every frame out is sealed, every frame in opened.
  std::unique_ptr<FrameSeal> outbound_;
  std::unique_ptr<FrameSeal> inbound_;
  std::size_t read_low_watermark_ = 0;
  bool connected_ = false;  // accepted, or the connect completed
};

}  // namespace grove
