// A daemon other than the controller (groved): it reports to the controller,
// learns the endpoint table, relays and takes part in collectives, sends
// heartbeats, and exits when the controller says so or disappears.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "daemon/control_plane/controller_watch.h"
#include "daemon/daemon_runtime.h"
#include "daemon/host_info.h"
#include "daemon/rank_host.h"
#include "os/event_loop.h"
#include "os/timer.h"
#include "plm/bootstrap.h"
#include "plm/ssh_launcher.h"
#include "rml/transport/endpoint.h"
#include "util/log.h"
#include "util/param_registry.h"

namespace grove {

struct NodeOptions {
  Vpid vpid = 1;
  std::uint32_t dvm_size = 2;
  Endpoint controller;
  std::vector<std::byte> secret;
  std::string session_dir;
  std::string topology_xml;  // import this host's topology from here (local daemons)
  std::string bind_host = "127.0.0.1";
  bool joining = false;  // grown into a running DVM: the welcome carries the seed
  // Set for daemons started over ssh: whom to start once welcomed.
  std::optional<SpawnPlan> plan;
  RemoteSettings remote;
};

class DaemonNode {
 public:
  DaemonNode(const ParamRegistry& params, Log& log, NodeOptions options);
  ~DaemonNode();
  // Runs until shutdown; returns the process exit code.
  int run();

 private:
  // The tags groved owns (the rank host claims its own): the controller's
  // answers, welcome and eviction; the endpoint table, the shutdown, the
  // counters request and barrier benchmark rounds.
  void claim_tags();
  void on_controller_message(Vpid from, std::uint16_t tag, const Bytes& payload);
  // A joiner's welcome: every daemon's endpoint, then the engine's seed.
  void on_join_welcome(const Bytes& payload);
  void add_peers(const EndpointTable& table);
  void on_daemon_broadcast(const DeliverBroadcast& deliver);
  void on_peer_lost(Vpid peer);
  void on_welcome();
  void send_heartbeat();
  void on_heartbeat_timer();
  void on_signal();
  void on_sigchld();

  const ParamRegistry& params_;
  Log& log_;
  NodeOptions options_;
  std::optional<EventLoop> loop_;  // made in run(), once libevent is threaded
  std::unique_ptr<DaemonRuntime> runtime_;
  Timer heartbeat_;
  // Our heartbeats and the controller's answers (daemon_heartbeat_ms > 0).
  std::optional<ControllerWatch> controller_watch_;
  SignalWatch sigterm_;
  SignalWatch sigchld_;
  std::unique_ptr<HostTopology> topology_;  // loaded once; the PMIx server shares it
  std::unique_ptr<RankHost> rank_host_;
  TagClaim control_tags_, broadcast_tags_;
  // `grove bench barrier`: with Bruck fences each daemon ends a round by
  // itself, so the next round's start can arrive before this one ended here;
  // it waits, or it would be taken for this round.
  struct BenchRounds {
    TagClaim ends;
    bool open = false;
    std::vector<BenchBarrier> waiting;
  };
  BenchRounds bench_;
  void contribute_bench(const BenchBarrier& round);
  std::unique_ptr<SshLauncher> ssh_;  // tree spawn: our children in the plan
  bool welcomed_ = false;
  bool stopping_ = false;
  int exit_code_ = 0;
};

}  // namespace grove
