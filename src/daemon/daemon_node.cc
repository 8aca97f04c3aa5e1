#include "daemon/daemon_node.h"

#include <signal.h>
#include <unistd.h>
#include <cstdio>

#include "daemon/control_plane/control_messages.h"
#include "daemon/host_info.h"
#include "grpcomm/join_seed.h"
#include "os/process_limits.h"
#include "util/text.h"

namespace grove {

DaemonNode::DaemonNode(const ParamRegistry& params, Log& log, NodeOptions options)
    : params_(params), log_(log), options_(std::move(options)) {}

DaemonNode::~DaemonNode() {
  ssh_.reset();
  rank_host_.reset();
  topology_.reset();  // after the PMIx server, which uses it
  heartbeat_ = Timer();
  sigchld_ = SignalWatch();
  sigterm_ = SignalWatch();
  runtime_.reset();
  loop_.reset();
}

int DaemonNode::run() {
  // A daemon ends when its controller stops the DVM (or on SIGTERM), never
  // on Ctrl-C: in a terminal, Ctrl-C on a foreground `grove start` reaches
  // the local daemons too (one process group), and each, ended at once, cut
  // its connections under the controller's orderly stop ("Connection reset
  // by peer" errors). Ranks start with every signal at its default.
  signal(SIGINT, SIG_IGN);
  if (auto status = enable_event_threads(); !status) {
    log_.error("%s", status.error().message.c_str());
    return 1;
  }
  loop_.emplace();
  event_base* base = loop_->base();
  RuntimeHooks hooks;
  hooks.heard_from = [this](Vpid from) {
    if (from == kControllerVpid && controller_watch_) controller_watch_->heard(runtime_->now());
  };
  hooks.on_help = [this](const ShowHelpTopic& help) {
    runtime_->send_control(kControllerVpid, daemon_tags::help, encode(help));
  };
  hooks.on_peer_lost = [this](Vpid peer) { on_peer_lost(peer); };
  RuntimeOptions runtime_options{options_.vpid, options_.dvm_size, options_.secret,
                                 options_.bind_host, options_.joining};
  auto runtime = DaemonRuntime::create(base, params_, log_, runtime_options, hooks);
  if (!runtime) {
    log_.error("cannot start: %s", runtime.error().message.c_str());
    return 1;
  }
  runtime_ = std::move(*runtime);
  runtime_->arm_crash_dump(params_.get_string("grpcomm_flight_dump_dir"),
                           "groved vpid " + std::to_string(options_.vpid));
  claim_tags();
  auto endpoint = runtime_->listen();
  if (!endpoint) {
    log_.error("cannot listen: %s", endpoint.error().message.c_str());
    return 1;
  }
  if (auto status = runtime_->add_peer(kControllerVpid, options_.controller); !status) {
    log_.error("bad controller address: %s", status.error().message.c_str());
    return 1;
  }
  topology_ = HostTopology::load(options_.topology_xml);
  if (!options_.topology_xml.empty() && !topology_->imported())
    log_.verbose("daemon", 1, "could not import the topology from %s; discovered it",
                 options_.topology_xml.c_str());
  DaemonReport report{options_.vpid,
                      endpoint->to_string(),
                      local_hostname(),
                      topology_->core_count(),
                      static_cast<std::uint32_t>(getpid()),
                      topology_->imported(),
                      topology_->package_count(),
                      open_file_limit()};
  runtime_->send_control(kControllerVpid, daemon_tags::report, encode(report));
  log_.verbose("daemon", 1, "listening on %s, reported to %s", endpoint->to_string().c_str(),
               options_.controller.to_string().c_str());

  if (params_.get_int("daemon_heartbeat_ms") > 0) {
    heartbeat_ = Timer(base, [this] { on_heartbeat_timer(); });
    auto interval_ms = params_.get_int("daemon_heartbeat_ms");
    controller_watch_.emplace(
        static_cast<TimeNs>(interval_ms) * 1'000'000ULL,
        static_cast<TimeNs>(params_.get_int("daemon_controller_timeout_ms")) * 1'000'000ULL,
        runtime_->now());
    heartbeat_.arm_every(interval_ms);
  }
  sigterm_ = SignalWatch(base, SIGTERM, [this] { on_signal(); });
  RankReports reports;
  reports.output = [this](const JobOutput& output) {
    runtime_->send_control(kControllerVpid, job_tags::output, encode(output));
  };
  reports.exit = [this](const RankExit& exit) {
    runtime_->send_control(kControllerVpid, job_tags::exited, encode(exit));
  };
  reports.started = [this](const RanksStarted& started) {
    runtime_->send_control(kControllerVpid, job_tags::ranks_started, encode(started));
  };
  auto ranks = RankHost::create(base, *runtime_, log_, params_, options_.vpid, options_.session_dir,
                                topology_->handle(), std::move(reports));
  if (!ranks) {
    log_.error("cannot start: %s", ranks.error().message.c_str());
    return 1;
  }
  rank_host_ = std::move(*ranks);
  sigchld_ = SignalWatch(base, SIGCHLD, [this] { on_sigchld(); });
  loop_->run();
  return exit_code_;
}

void DaemonNode::claim_tags() {
  control_tags_ = runtime_->own_control(
      {daemon_tags::heartbeat, daemon_tags::welcome, daemon_tags::evicted, daemon_tags::removed},
      [this](Vpid from, std::uint16_t tag, const Bytes& payload) {
        on_controller_message(from, tag, payload);
      });
  broadcast_tags_ = runtime_->own_broadcasts(
      {daemon_tags::endpoint_table, daemon_tags::shutdown, daemon_tags::counters_request,
       daemon_tags::bench_barrier},
      [this](const DeliverBroadcast& deliver) { on_daemon_broadcast(deliver); });
  bench_.ends = runtime_->own_fences(kBenchBarrierSignature, [this](const FenceDone&) {
    bench_.open = false;
    if (bench_.waiting.empty()) return;
    BenchBarrier next = std::move(bench_.waiting.front());
    bench_.waiting.erase(bench_.waiting.begin());
    contribute_bench(next);
  });
}

void DaemonNode::contribute_bench(const BenchBarrier& round) {
  log_.verbose("daemon", 2, "barrier benchmark round: contributing to '%s'",
               round.signature.c_str());
  bench_.open = true;
  runtime_->contribute(
      FenceRequest{round.signature, round.participants, bench_contribution(round, options_.vpid)});
}

void DaemonNode::on_controller_message(Vpid from, std::uint16_t tag, const Bytes& payload) {
  if (tag == daemon_tags::heartbeat) {  // the controller's answer: our send time
    auto beat = wire_decode<Heartbeat>(payload);
    if (beat && controller_watch_) controller_watch_->answered(*beat, runtime_->now());
    return;
  }
  if (tag == daemon_tags::welcome && from == kControllerVpid) {
    if (runtime_->awaiting_seed()) {
      on_join_welcome(payload);
    } else {
      on_welcome();
    }
    return;
  }
  if (tag == daemon_tags::evicted && from == kControllerVpid) {
    auto eviction = wire_decode<Eviction>(payload);
    // The DVM goes on without us; our ranks go with us (RankHost).
    log_.error("the controller declared this daemon lost (%s); leaving the DVM",
               eviction ? eviction->reason.c_str() : "no reason given");
    exit_code_ = 1;
    loop_->exit();
    return;
  }
  if (tag == daemon_tags::removed && from == kControllerVpid) {
    auto removal = wire_decode<Eviction>(payload);
    // A clean leaving: the DVM has routed around us already; closed links
    // are no news from now on, and our ranks (none, drained) go with us.
    log_.verbose("daemon", 1, "removed from the DVM (%s); leaving",
                 removal ? removal->reason.c_str() : "no reason given");
    stopping_ = true;
    exit_code_ = 0;
    loop_->exit();
  }
}

void DaemonNode::on_join_welcome(const Bytes& payload) {
  auto welcome = wire_decode<JoinWelcome>(payload);
  auto seed = welcome ? decode_join_seed(welcome->seed) : Result<JoinSeed>(welcome.error());
  Status joined = seed ? ok_status() : Status(seed.error());
  runtime_->reach_join_fault(FaultPoint::join_welcomed);
  if (joined) {
    add_peers(welcome->table);
    joined = runtime_->join(*seed);
  }
  if (!joined) {
    // The controller declares us lost once our connection closes.
    log_.error("cannot join the DVM: %s", joined.error().message.c_str());
    exit_code_ = 1;
    loop_->exit();
    return;
  }
  log_.verbose("daemon", 1, "joined the DVM at epoch %llu",
               static_cast<unsigned long long>(runtime_->engine().membership().epoch()));
  runtime_->reach_join_fault(FaultPoint::join_seeded);
  if (options_.plan) {
    // Started over ssh by grove grow: our launcher's slot frees on this line.
    std::printf("%s\n", std::string(kDaemonUpLine).c_str());
    std::fflush(stdout);
  }
}

void DaemonNode::add_peers(const EndpointTable& table) {
  for (const DaemonReport& daemon : table.daemons) {
    auto endpoint = Endpoint::parse(daemon.endpoint);
    if (!endpoint || daemon.vpid == options_.vpid) continue;
    if (auto status = runtime_->add_peer(daemon.vpid, *endpoint); !status) {
      log_.error("endpoint of daemon %u: %s", daemon.vpid, status.error().message.c_str());
    }
  }
}

void DaemonNode::on_welcome() {
  if (welcomed_ || !options_.plan) return;
  welcomed_ = true;
  // Our launcher's slot frees on this line; then we start our own children.
  std::printf("%s\n", std::string(kDaemonUpLine).c_str());
  std::fflush(stdout);
  std::vector<Vpid> children = options_.plan->launches(options_.vpid);
  if (children.empty()) return;
  SshLaunchConfig config;
  config.agent = split_words(params_.get_string("plm_ssh_agent"));
  if (config.agent.empty()) {
    for (Vpid child : children) {
      runtime_->send_control(kControllerVpid, daemon_tags::launch_failed,
                             encode(LaunchFailure{child, "plm_ssh_agent is empty"}));
    }
    return;
  }
  config.max_concurrent = static_cast<std::uint32_t>(params_.get_int("plm_ssh_num_concurrent"));
  config.param_arguments = params_.child_arguments();
  config.bootstrap = Bootstrap{options_.secret, options_.plan, options_.remote};
  SshLauncher::Hooks hooks;
  hooks.on_failed = [this](Vpid vpid, const std::string& reason) {
    runtime_->send_control(kControllerVpid, daemon_tags::launch_failed,
                           encode(LaunchFailure{vpid, reason}));
  };
  ssh_ = std::make_unique<SshLauncher>(loop_->base(), log_, std::move(config), std::move(hooks));
  log_.verbose("plm", 1, "starting %zu daemons of our subtree", children.size());
  ssh_->launch(children);
}

void DaemonNode::on_daemon_broadcast(const DeliverBroadcast& deliver) {
  switch (deliver.tag) {
    case daemon_tags::endpoint_table: {
      auto table = wire_decode<EndpointTable>(*deliver.payload);
      if (!table) {
        log_.error("%s", table.error().message.c_str());
        return;
      }
      add_peers(*table);
      log_.verbose("daemon", 1, "learned %zu endpoints", table->daemons.size());
      return;
    }
    case daemon_tags::shutdown:
      // Forwarding happens in this same step (the engine queued it after this
      // delivery); the controller closes our connection once every daemon has
      // the notice, and we leave then.
      stopping_ = true;
      return;
    case daemon_tags::counters_request: {
      auto request = wire_decode<CountersRequest>(*deliver.payload);
      if (!request) return;
      CountersReply reply = runtime_->counters(request->request);
      reply.controller_rtt_ns = controller_watch_ ? controller_watch_->rtt_ns() : 0;
      reply.wakes = wake_counts(*loop_, rank_host_.get());
      if (request->flight) reply.flight = runtime_->flight_recording();
      runtime_->send_control(kControllerVpid, daemon_tags::counters_reply, encode(reply));
      return;
    }
    case daemon_tags::bench_barrier: {
      auto bench = wire_decode<BenchBarrier>(*deliver.payload);
      if (!bench) return;
      if (bench_.open) {
        bench_.waiting.push_back(std::move(*bench));
      } else {
        contribute_bench(*bench);
      }
      return;
    }
    default:
      return;
  }
}

void DaemonNode::on_peer_lost(Vpid peer) {
  if (peer != kControllerVpid) {
    // Frames queued to the peer are gone and nothing resends them while it
    // stays a member, so the controller must hear of it (it ends the peer's
    // membership; the trees repair around it). A departed peer's or a
    // stopping DVM's closed links are no news.
    if (stopping_ || !runtime_->engine().membership().is_alive(peer)) return;
    log_.error("lost the link to daemon %u; telling the controller", peer);
    runtime_->send_control(kControllerVpid, daemon_tags::link_lost, encode(LinkLost{peer}));
    return;
  }
  if (!stopping_) {
    log_.error("lost the controller; leaving the DVM");
    exit_code_ = 1;
  }
  loop_->exit();
}

void DaemonNode::send_heartbeat() {
  ControllerWatch::Beat beat = controller_watch_->beat(runtime_->now());
  runtime_->send_control(kControllerVpid, daemon_tags::heartbeat, encode(beat.heartbeat));
  if (!beat.leave || stopping_) return;
  // Ranks go with us (JobHost).
  log_.error("%s; leaving the DVM with this daemon's ranks", beat.leave->c_str());
  exit_code_ = 1;
  loop_->exit();
}

void DaemonNode::on_heartbeat_timer() {
  send_heartbeat();
  log_.flush_limited();  // a burst of limited lines that stopped is still counted
}

void DaemonNode::on_sigchld() {
  if (rank_host_) rank_host_->reap();
  if (ssh_) ssh_->reap();
}

void DaemonNode::on_signal() {
  log_.verbose("daemon", 1, "SIGTERM: leaving");
  exit_code_ = 0;
  loop_->exit();
}

}  // namespace grove
