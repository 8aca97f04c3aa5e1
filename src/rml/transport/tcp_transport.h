// rml's TCP transport: one authenticated connection per peer pair on
// libevent, carrying whole frames (rml/frame.h) in order.
//
// Threads. Every public method must be called on the thread that runs the
// main event_base, and both callbacks run there too. With worker_threads N > 0
// the sockets live on N extra event bases, each on its own thread; each new
// connection goes to the next worker in turn, so writes and reads spread over
// them. Workers hand frames and losses to the main base through a locked
// queue whose wakeup is an eventfd watched on the main base.
//
// Connections. The first send() to a peer opens a connection (TCP_NODELAY)
// and queues frames until the handshake (handshake.h) completes. A peer that
// connected to us first is answered on that connection. If both sides dial
// at once there are two connections, one per direction, each used for
// sending only by the side that opened it; both receive.
//
// Failures. A failed handshake, a bad frame header (rml/frame.h's checks, a
// payload over max_payload, a sender field that is not the authenticated
// peer), a socket error (among them bytes unacknowledged for link_timeout_ms:
// a partition or a dead host) or a handshake timeout closes that connection and
// logs the reason with Log::error naming the peer; the transport keeps
// running. Nothing a peer sends before it authenticated is acted upon.
// on_peer_lost(P) fires once when P is lost: an authenticated connection with
// P closed or failed, or a connection we opened to P could not be
// established. Every other connection with P is then closed too, and frames
// still queued to P are dropped; a later send() to P dials again.
//
// SIGPIPE. create() sets SIGPIPE to SIG_IGN if it is SIG_DFL (a write to a
// peer that went away must be an error, not the end of the daemon). Whoever
// launches children must restore SIG_DFL in the child before exec.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rml/membership.h"
#include "rml/send_path.h"
#include "rml/transport/counters.h"
#include "rml/transport/endpoint.h"
#include "rml/transport/frame_seal.h"
#include "util/log.h"
#include "util/result.h"

struct event_base;

namespace grove {

struct TcpTransportConfig {
  Vpid self = 0;
  std::vector<std::byte> secret;  // kDvmSecretSize bytes: generate_dvm_secret() / read_secret()
  std::uint64_t max_payload = std::uint64_t{256} << 20;  // rml_base_max_frame_size
  int worker_threads = 0;                                // runtime_num_worker_threads, 0..256
  const Log* log = nullptr;  // required; must outlive the transport; used from every thread
  std::uint32_t handshake_timeout_ms = 10000;  // a connection not authenticated by then closes
  FrameProtection protection = FrameProtection::integrity;    // rml_frame_protection
  std::uint64_t send_queue_limit = std::uint64_t{512} << 20;  // rml_send_queue_limit
  std::uint32_t send_queue_timeout_ms = 10000;                // rml_send_queue_timeout_ms
  std::uint32_t link_timeout_ms = 10000;                      // rml_link_timeout_ms (0: kernel's)
};

struct TcpTransportCallbacks {
  // A whole frame from an authenticated peer (or from this daemon's own
  // send to itself). Its header has been validated against max_payload.
  std::function<void(Vpid from, std::vector<std::byte> frame)> on_frame;
  std::function<void(Vpid peer)> on_peer_lost;
};

// Turns on libevent's pthreads locking (evthread_use_pthreads). The transport
// calls it itself before creating worker bases; a daemon that also wants its
// main base lock-enabled calls it before creating that base. Idempotent.
Status enable_event_threads();

class TcpTransport {
 public:
  // The main base must outlive the transport. Errors: a secret of the wrong
  // size, a missing log or callback, worker_threads out of range, or a worker
  // that could not start.
  static Result<std::unique_ptr<TcpTransport>> create(event_base* main_base,
                                                      TcpTransportConfig config,
                                                      TcpTransportCallbacks callbacks);
  // Closes every listener and connection and joins the workers. Peers see
  // their connections close. No callback runs from here on. Must not be
  // called from inside on_frame or on_peer_lost.
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  // Listens on a numeric address; port 0 picks a free port. Returns the
  // address actually bound. May be called more than once.
  Result<Endpoint> listen(const std::string& bind_host, std::uint16_t port);

  // Where to dial peer. Replacing the endpoint affects the next connection
  // only. The host must be numeric. The self vpid is accepted and ignored.
  Status add_peer(Vpid peer, const Endpoint& endpoint);

  // Sends a whole encoded frame. The transport stamps its own vpid into the
  // frame's sender field (receivers check it). A send to self never touches
  // a socket: the frame reaches on_frame from the main loop later, never from
  // inside send(). Errors (nothing sent): a malformed frame or one over
  // max_payload, or a peer with neither an endpoint nor a connection.
  // With rml_base_verbose >= 2 each send logs one line such as
  // "RML-SEND-DIRECT to 5 tag 3 topology release bytes 97".
  Status send(Vpid peer, std::vector<std::byte> frame, SendPath path);

  const TransportCounters& counters() const;
  Vpid self() const;
  // Connections the main thread tracks: authenticated ones, and ones this
  // side opened that are still connecting. For tests and diagnostics.
  std::size_t connection_count() const;

 private:
  class Impl;
  explicit TcpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove
