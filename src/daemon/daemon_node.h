// A daemon other than the controller (groved): it reports to the controller,
// learns the endpoint table, relays and takes part in collectives, sends
// heartbeats, and exits when the controller says so or disappears.
#pragma once

#include <event2/event.h>

#include <memory>
#include <optional>
#include <string>

#include "daemon/control_plane/controller_watch.h"
#include "daemon/daemon_runtime.h"
#include "daemon/host_info.h"
#include "daemon/rank_host.h"
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
  void on_control(Vpid from, const FrameHeader& header, const Bytes& payload);
  void on_deliver(const DeliverBroadcast& deliver);
  void on_peer_lost(Vpid peer);
  void on_welcome();
  void send_heartbeat();
  static void on_heartbeat_timer(evutil_socket_t, short, void* arg);
  static void on_signal(evutil_socket_t, short, void* arg);
  static void on_sigchld(evutil_socket_t, short, void* arg);

  const ParamRegistry& params_;
  Log& log_;
  NodeOptions options_;
  EventBasePtr base_;
  std::unique_ptr<DaemonRuntime> runtime_;
  EventPtr heartbeat_;
  // Our heartbeats and the controller's answers (daemon_heartbeat_ms > 0).
  std::optional<ControllerWatch> controller_watch_;
  EventPtr sigterm_;
  EventPtr sigchld_;
  std::unique_ptr<HostTopology> topology_;  // loaded once; the PMIx server shares it
  std::unique_ptr<RankHost> rank_host_;
  std::unique_ptr<SshLauncher> ssh_;  // tree spawn: our children in the plan
  bool welcomed_ = false;
  bool stopping_ = false;
  int exit_code_ = 0;
};

}  // namespace grove
