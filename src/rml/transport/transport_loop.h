// Internal to the transport. One TransportLoop per event base that carries
// connections: the main base (runtime_num_worker_threads 0) or a worker base
// running on its own thread. A loop owns its connections and is the only
// thread that touches them; the main thread talks to it with LoopTasks and
// hears back through MainEvents, both plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "os/event_handles.h"
#include "rml/membership.h"
#include "rml/topology.h"
#include "rml/transport/endpoint.h"
#include "rml/transport/handshake.h"
#include "rml/transport/mailbox.h"
#include "util/log.h"
#include "util/result.h"

namespace grove {

using ConnectionId = std::uint64_t;

// Loop -> main thread. A loop reports a connection's close only if the main
// thread knows it: an outgoing connection, or an incoming one that
// authenticated. An incoming connection that never authenticated is closed,
// logged, and forgotten without the main thread hearing of it.
struct PeerAuthenticated {
  ConnectionId id = 0;
  Vpid peer = 0;
  std::size_t loop = 0;
  bool outgoing = false;
};
struct FrameArrived {
  ConnectionId id = 0;
  Vpid peer = 0;
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  std::vector<std::byte> bytes;  // the whole frame, header validated
};
struct ConnectionClosed {
  ConnectionId id = 0;
};
struct LoopbackFrame {
  std::uint16_t tag = 0;
  TopologyKind topology = TopologyKind::routing;
  std::vector<std::byte> bytes;
};
using MainEvent = std::variant<PeerAuthenticated, FrameArrived, ConnectionClosed, LoopbackFrame>;

// Main thread -> loop.
struct AdoptSocket {  // an accepted connection
  ConnectionId id = 0;
  Fd fd;
  Endpoint remote;
};
struct OpenConnection {
  ConnectionId id = 0;
  Vpid peer = 0;
  Endpoint endpoint;
  SocketAddress address;
};
struct WriteFrame {
  ConnectionId id = 0;
  std::vector<std::byte> bytes;
};
struct CloseConnection {
  ConnectionId id = 0;
};
struct StopLoop {};
using LoopTask = std::variant<AdoptSocket, OpenConnection, WriteFrame, CloseConnection, StopLoop>;

// What every connection of a transport shares; immutable after creation.
struct LoopSettings {
  Vpid self = 0;
  SecretKey secret;
  std::uint64_t max_payload = 0;
  std::uint32_t handshake_timeout_ms = 0;
  const Log* log = nullptr;
  FrameProtection protection = FrameProtection::integrity;
  // Bytes queued to one peer and not yet taken by its socket: above the
  // limit for longer than the timeout, or above twice the limit at all, and
  // the peer is dropped (it is not reading; memory stays bounded).
  std::uint64_t send_queue_limit = std::uint64_t{512} << 20;
  std::uint32_t send_queue_timeout_ms = 10000;
  // Sent bytes the peer's host has not acknowledged for this long fail the
  // connection (TCP_USER_TIMEOUT): without it a partition holds a link, and
  // every frame queued on it, for the kernel's ~15 minutes. 0: kernel default.
  std::uint32_t link_timeout_ms = 10000;
};

enum class CloseSeverityKind : std::uint8_t {
  quiet,   // the main thread asked for it: not logged
  notice,  // a peer went away: logged at rml verbose level 1
  error,   // a protocol violation, failed handshake or socket error: always logged
};

class Connection;

class TransportLoop {
 public:
  // A loop on the caller's main base: tasks run inline, on the caller's thread.
  static std::unique_ptr<TransportLoop> on_main_base(event_base* base, const LoopSettings& settings,
                                                     Mailbox<MainEvent>& main, std::size_t index);
  // A loop with its own base and thread.
  static Result<std::unique_ptr<TransportLoop>> start_worker(const LoopSettings& settings,
                                                             Mailbox<MainEvent>& main,
                                                             std::size_t index);
  // Stops and joins the worker thread (if any), then closes every connection
  // quietly. Called on the main thread.
  ~TransportLoop();
  TransportLoop(const TransportLoop&) = delete;
  TransportLoop& operator=(const TransportLoop&) = delete;

  // Main thread: runs the task now on the main base, or hands it to the worker.
  void submit(LoopTask task);

  // The loop's own thread, for its connections.
  event_base* base() const { return base_; }
  std::size_t index() const { return index_; }
  const LoopSettings& settings() const { return settings_; }
  void notify_main(MainEvent event) { main_.post(std::move(event)); }
  void notify_main(std::vector<MainEvent> events) { main_.post_all(std::move(events)); }
  // Logs the reason, tells the main thread if it knows the connection, and
  // destroys it. A connection calling this for itself must return at once.
  void close(ConnectionId id, CloseSeverityKind severity, const std::string& reason);

 private:
  TransportLoop(event_base* base, const LoopSettings& settings, Mailbox<MainEvent>& main,
                std::size_t index);
  void handle(LoopTask& task);
  void handle_task(AdoptSocket& task);
  void handle_task(OpenConnection& task);
  void handle_task(WriteFrame& task);
  void handle_task(CloseConnection& task);
  void handle_task(StopLoop& task);

  EventBasePtr owned_base_;  // workers only
  event_base* base_;
  const LoopSettings& settings_;
  Mailbox<MainEvent>& main_;
  std::size_t index_;
  std::unique_ptr<Mailbox<LoopTask>> tasks_;  // workers only
  std::map<ConnectionId, std::unique_ptr<Connection>> connections_;
  std::thread thread_;  // declared last: joined before anything else goes away
};

}  // namespace grove
