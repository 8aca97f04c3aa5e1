#include "rml/transport/tcp_transport.h"

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <sodium.h>
#include <sys/socket.h>

#include <csignal>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "os/event_handles.h"
#include "rml/frame.h"
#include "rml/tag_registry.h"
#include "rml/topology.h"
#include "rml/transport/handshake.h"
#include "rml/transport/mailbox.h"
#include "rml/transport/transport_loop.h"

namespace grove {
namespace {

constexpr int kWorkerThreadsMax = 256;

void ignore_sigpipe() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

Status enable_event_threads() {
  if (evthread_use_pthreads() != 0) return Error{"libevent cannot use pthreads"};
  return ok_status();
}

class TcpTransport::Impl {
 public:
  Impl(event_base* base, const TcpTransportConfig& config, TcpTransportCallbacks callbacks,
       LoopSettings settings)
      : base_(base),
        log_(config.log),
        self_(config.self),
        max_payload_(config.max_payload),
        callbacks_(std::move(callbacks)),
        settings_(std::move(settings)) {}

  ~Impl() {
    // No accepts, then no loops (workers joined, connections closed), then
    // nothing left that could post to the mailbox.
    listeners_.clear();
    loops_.clear();
    mailbox_.reset();
  }

  Status start(int worker_threads) {
    auto mailbox = Mailbox<MainEvent>::create(base_, [this](MainEvent& event) { handle(event); });
    if (!mailbox) return mailbox.error();
    mailbox_ = std::move(*mailbox);
    if (worker_threads == 0) {
      loops_.push_back(TransportLoop::on_main_base(base_, settings_, *mailbox_, 0));
      return ok_status();
    }
    for (int index = 0; index < worker_threads; ++index) {
      auto loop =
          TransportLoop::start_worker(settings_, *mailbox_, static_cast<std::size_t>(index));
      if (!loop) return loop.error();
      loops_.push_back(std::move(*loop));
    }
    return ok_status();
  }

  Result<Endpoint> listen(const std::string& bind_host, std::uint16_t port) {
    Endpoint wanted{bind_host, port};
    auto address = to_socket_address(wanted);
    if (!address)
      return Error{"cannot listen on " + wanted.to_string() + ": " + address.error().message};
    constexpr unsigned kFlags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC;
    ListenerPtr listener(evconnlistener_new_bind(base_, &Impl::on_accept, this, kFlags,
                                                 /*backlog=*/-1, address->get(),
                                                 static_cast<int>(address->length)));
    if (!listener) {
      return Error{"cannot listen on " + wanted.to_string() + ": " + std::strerror(errno)};
    }
    evconnlistener_set_error_cb(listener.get(), &Impl::on_accept_error);
    sockaddr_storage bound{};
    socklen_t bound_length = sizeof bound;
    if (::getsockname(evconnlistener_get_fd(listener.get()), reinterpret_cast<sockaddr*>(&bound),
                      &bound_length) != 0) {
      return Error{"cannot read the address bound for " + wanted.to_string() + ": " +
                   std::strerror(errno)};
    }
    Endpoint actual = endpoint_of(reinterpret_cast<const sockaddr*>(&bound), bound_length);
    listeners_.push_back(std::move(listener));
    log_->verbose("rml", 1, "listening on %s", actual.to_string().c_str());
    return actual;
  }

  Status add_peer(Vpid peer, const Endpoint& endpoint) {
    if (auto address = to_socket_address(endpoint); !address) {
      return Error{"peer vpid " + std::to_string(peer) + " at " + endpoint.to_string() + ": " +
                   address.error().message};
    }
    if (peer == self_) return ok_status();
    peers_[peer].endpoint = endpoint;
    return ok_status();
  }

  Status send(Vpid peer, std::vector<std::byte> frame, SendPath path) {
    auto view = decode_frame(frame, max_payload_);
    if (!view) {
      return Error{"cannot send to vpid " + std::to_string(peer) + ": " + view.error().message};
    }
    const FrameHeader& key = view->header;
    set_frame_sender(frame, self_);
    if (peer == self_) {
      log_send(path, peer, key, frame.size());
      counters_.loopback.add(frame.size());
      mailbox_->post(LoopbackFrame{key.tag, key.topology, std::move(frame)});
      return ok_status();
    }
    auto id = connection_for(peer);
    if (!id) return id.error();
    log_send(path, peer, key, frame.size());
    counters_.sent.count_frame(frame);
    loops_[connections_.at(*id).loop]->submit(WriteFrame{*id, std::move(frame)});
    return ok_status();
  }

  const TransportCounters& counters() const { return counters_; }
  Vpid self() const { return self_; }
  std::size_t connection_count() const { return connections_.size(); }

 private:
  struct PeerRecord {
    std::optional<Endpoint> endpoint;
    std::optional<ConnectionId> send_connection;
    std::set<ConnectionId> incoming;  // authenticated connections the peer opened
  };
  struct ConnectionRecord {
    Vpid peer = 0;
    std::size_t loop = 0;
    bool outgoing = false;
  };

  void log_send(SendPath path, Vpid peer, const FrameHeader& key, std::size_t bytes) const {
    std::string_view path_name = send_path_name(path);
    std::string_view topology = topology_name(key.topology);
    std::string_view type = frame_type_name(key.type);
    std::string_view tag = tag_name(key.tag);
    log_->verbose("rml", frame_log_level(key.tag, 2),
                  "%.*s to %u tag %.*s topology %.*s bytes %zu %.*s",
                  static_cast<int>(path_name.size()), path_name.data(), peer,
                  static_cast<int>(tag.size()), tag.data(), static_cast<int>(topology.size()),
                  topology.data(), bytes, static_cast<int>(type.size()), type.data());
  }

  std::size_t next_loop() {
    std::size_t loop = next_loop_;
    next_loop_ = (next_loop_ + 1) % loops_.size();
    return loop;
  }

  // The connection frames to peer go on: the one already chosen, else one
  // the peer opened to us, else a new one dialled now.
  Result<ConnectionId> connection_for(Vpid peer) {
    auto found = peers_.find(peer);
    if (found == peers_.end()) {
      return Error{"cannot send to unknown peer vpid " + std::to_string(peer) +
                   ": no endpoint and no connection"};
    }
    PeerRecord& record = found->second;
    if (record.send_connection) return *record.send_connection;
    if (!record.incoming.empty()) {
      record.send_connection = *record.incoming.begin();
      return *record.send_connection;
    }
    if (!record.endpoint) {
      return Error{"cannot send to unknown peer vpid " + std::to_string(peer) +
                   ": no endpoint and no connection"};
    }
    auto address = to_socket_address(*record.endpoint);
    if (!address) return address.error();  // add_peer checked it; kept for safety
    ConnectionId id = next_connection_id_++;
    std::size_t loop = next_loop();
    connections_[id] = ConnectionRecord{peer, loop, /*outgoing=*/true};
    record.send_connection = id;
    loops_[loop]->submit(OpenConnection{id, peer, *record.endpoint, *address});
    return id;
  }

  void handle(MainEvent& event) {
    std::visit([this](auto& each) { handle_event(each); }, event);
  }

  void handle_event(PeerAuthenticated& event) {
    if (event.outgoing) return;  // recorded when it was opened
    connections_[event.id] = ConnectionRecord{event.peer, event.loop, /*outgoing=*/false};
    peers_[event.peer].incoming.insert(event.id);
  }

  void handle_event(FrameArrived& event) {
    if (!connections_.contains(event.id)) {
      log_->verbose("rml", 2, "dropping a frame from vpid %u: its connection was closed",
                    event.peer);
      return;
    }
    counters_.received.count_frame(event.bytes);
    std::string_view topology = topology_name(event.topology);
    std::string_view tag = tag_name(event.tag);
    log_->verbose("rml", frame_log_level(event.tag, 3),
                  "RML-RECV from %u tag %.*s topology %.*s bytes %zu", event.peer,
                  static_cast<int>(tag.size()), tag.data(), static_cast<int>(topology.size()),
                  topology.data(), event.bytes.size());
    callbacks_.on_frame(event.peer, std::move(event.bytes));
  }

  void handle_event(ConnectionClosed& event) {
    auto found = connections_.find(event.id);
    if (found == connections_.end()) return;  // its peer was already lost
    lose_peer(found->second.peer);
  }

  void handle_event(LoopbackFrame& event) { callbacks_.on_frame(self_, std::move(event.bytes)); }

  void lose_peer(Vpid peer) {
    std::vector<ConnectionId> doomed;
    for (const auto& [id, record] : connections_) {
      if (record.peer == peer) doomed.push_back(id);
    }
    for (ConnectionId id : doomed) {
      std::size_t loop = connections_.at(id).loop;
      connections_.erase(id);
      loops_[loop]->submit(CloseConnection{id});
    }
    if (auto found = peers_.find(peer); found != peers_.end()) {
      found->second.send_connection.reset();
      found->second.incoming.clear();
      if (!found->second.endpoint) peers_.erase(found);
    }
    ++counters_.peers_lost;
    log_->verbose("rml", 1, "lost vpid %u", peer);
    callbacks_.on_peer_lost(peer);
  }

  static void on_accept(evconnlistener*, evutil_socket_t fd, sockaddr* address, int length,
                        void* arg) {
    auto* self = static_cast<Impl*>(arg);
    Fd owned(fd);
    Endpoint remote = endpoint_of(address, static_cast<socklen_t>(length));
    self->log_->verbose("rml", 3, "accepted a connection from %s", remote.to_string().c_str());
    ConnectionId id = self->next_connection_id_++;
    self->loops_[self->next_loop()]->submit(AdoptSocket{id, std::move(owned), remote});
  }

  static void on_accept_error(evconnlistener*, void* arg) {
    auto* self = static_cast<Impl*>(arg);
    int error = EVUTIL_SOCKET_ERROR();
    self->log_->error_limited("rml: accept", "rml: accepting a connection failed: %s",
                              std::strerror(error));
    if (error != EMFILE && error != ENFILE && error != ENOBUFS && error != ENOMEM) return;
    // Out of descriptors (a flood of connections): the pending connection
    // stays in the backlog and the listener would fire again at once, for
    // ever. It rests a while; what closes meanwhile makes room.
    for (ListenerPtr& listener : self->listeners_)
      evconnlistener_disable(listener.get());
    if (!self->accept_pause_) {
      self->accept_pause_.reset(event_new(
          self->base_, -1, 0,
          [](evutil_socket_t, short, void* impl) {
            for (ListenerPtr& listener : static_cast<Impl*>(impl)->listeners_)
              evconnlistener_enable(listener.get());
          },
          self));
    }
    static const timeval rest{0, 200'000};
    event_add(self->accept_pause_.get(), &rest);
  }

  event_base* base_;
  const Log* log_;
  Vpid self_;
  std::uint64_t max_payload_;
  TcpTransportCallbacks callbacks_;
  LoopSettings settings_;
  std::unique_ptr<Mailbox<MainEvent>> mailbox_;
  std::vector<std::unique_ptr<TransportLoop>> loops_;
  std::vector<ListenerPtr> listeners_;
  EventPtr accept_pause_;  // re-enables the listeners after running out of descriptors
  std::map<Vpid, PeerRecord> peers_;
  std::map<ConnectionId, ConnectionRecord> connections_;
  ConnectionId next_connection_id_ = 1;
  std::size_t next_loop_ = 0;
  TransportCounters counters_;
};

Result<std::unique_ptr<TcpTransport>> TcpTransport::create(event_base* main_base,
                                                           TcpTransportConfig config,
                                                           TcpTransportCallbacks callbacks) {
  if (main_base == nullptr) return Error{"rml transport needs an event base"};
  if (config.log == nullptr) return Error{"rml transport needs a log"};
  if (!callbacks.on_frame || !callbacks.on_peer_lost) {
    return Error{"rml transport needs both on_frame and on_peer_lost"};
  }
  if (config.worker_threads < 0 || config.worker_threads > kWorkerThreadsMax) {
    return Error{"worker_threads must be in 0.." + std::to_string(kWorkerThreadsMax) + ", got " +
                 std::to_string(config.worker_threads)};
  }
  auto secret = SecretKey::from_bytes(config.secret);
  sodium_memzero(config.secret.data(), config.secret.size());
  if (!secret) return secret.error();
  if (config.worker_threads > 0) {
    if (auto threads = enable_event_threads(); !threads) return threads.error();
  }
  ignore_sigpipe();
  LoopSettings settings{.self = config.self,
                        .secret = *secret,
                        .max_payload = config.max_payload,
                        .handshake_timeout_ms = config.handshake_timeout_ms,
                        .log = config.log,
                        .protection = config.protection,
                        .send_queue_limit = config.send_queue_limit,
                        .send_queue_timeout_ms = config.send_queue_timeout_ms,
                        .link_timeout_ms = config.link_timeout_ms};
  auto impl = std::make_unique<Impl>(main_base, config, std::move(callbacks), std::move(settings));
  if (auto started = impl->start(config.worker_threads); !started) return started.error();
  return std::unique_ptr<TcpTransport>(new TcpTransport(std::move(impl)));
}

TcpTransport::TcpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TcpTransport::~TcpTransport() = default;

Result<Endpoint> TcpTransport::listen(const std::string& bind_host, std::uint16_t port) {
  return impl_->listen(bind_host, port);
}
Status TcpTransport::add_peer(Vpid peer, const Endpoint& endpoint) {
  return impl_->add_peer(peer, endpoint);
}
Status TcpTransport::send(Vpid peer, std::vector<std::byte> frame, SendPath path) {
  return impl_->send(peer, std::move(frame), path);
}
const TransportCounters& TcpTransport::counters() const {
  return impl_->counters();
}
Vpid TcpTransport::self() const {
  return impl_->self();
}
std::size_t TcpTransport::connection_count() const {
  return impl_->connection_count();
}

}  // namespace grove
