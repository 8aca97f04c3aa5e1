// The controller's assembly: the event loop, the runtime (engine over TCP),
// the roster, the CLI's socket, signals, the daemons' launch, and the
// controller's own rank host and job manager, wired to each other.
#include <signal.h>
#include <unistd.h>

#include "daemon/controller.h"
#include "daemon/dvm_events.h"
#include "daemon/host_info.h"
#include "plm/route_address.h"
#include "rml/transport/dvm_secret.h"

namespace grove {

Status Controller::start() {
  if (auto status = enable_event_threads(); !status) return status;
  loop_.emplace();
  if (!*loop_) return Error{"cannot create the event loop"};
  auto dvm = create_dvm_directory(static_cast<int>(getpid()), options_.one_job);
  if (!dvm) return dvm.error();
  identity_.dvm = *dvm;
  identity_.secret = generate_dvm_secret();
  if (auto status = start_runtime(); !status) return status;
  make_roster();
  auto control =
      ControlServer::create(loop_->base(), identity_.dvm.socket_path,
                            [this](const nlohmann::json& request, ReplyFn reply,
                                   PartialFn partial) { handle_request(request, reply, partial); });
  if (!control) return control.error();
  control_ = std::move(*control);
  // Signals first: a launcher child (ssh, srun) may exit at once, and a
  // SIGCHLD before its event is added would be lost.
  watch_signals();
  // The daemons start now, so their start-up (hwloc, PMIx) overlaps the
  // controller's own below; what they send waits for the loop, which runs
  // once start() returns.
  if (auto status = launch_daemons(); !status) return status;
  if (auto status = start_rank_host(); !status) return status;
  start_job_table();
  start_flight_dumps();
  claim_tags();
  apply(launch_.supervisor.begin());
  if (options_.daemons == 1) become_ready();
  return ok_status();
}

Status Controller::start_runtime() {
  RuntimeHooks hooks;
  hooks.heard_from = [this](Vpid from) {
    if (roster_) roster_->heard_from(from, runtime_->now());
  };
  hooks.on_broadcast_done = [this](const BroadcastDone& done) { on_broadcast_done(done); };
  hooks.on_help = [this](const ShowHelpTopic& help) { on_help(help); };
  hooks.on_peer_lost = [this](Vpid peer) { on_peer_lost(peer); };
  hooks.on_problem = [this](Vpid where, const std::string& text) { on_problem(where, text); };
  // Daemons on other hosts reach us at the address that routes to them.
  std::string bind_host = "127.0.0.1";
  std::string advertised = bind_host;
  if (options_.plan) {
    options_.daemons = options_.plan->size();
    bind_host = "0.0.0.0";
    advertised = "127.0.0.1";
    for (const PlannedDaemon& daemon : options_.plan->daemons) {
      if (daemon.vpid == kControllerVpid) continue;
      auto address = source_address_toward(daemon.host.name);
      if (!address) return address.error();
      advertised = *address;
      break;
    }
  }
  auto runtime = DaemonRuntime::create(
      loop_->base(), params_, log_,
      RuntimeOptions{kControllerVpid, options_.daemons, identity_.secret, bind_host}, hooks);
  if (!runtime) return runtime.error();
  runtime_ = std::move(*runtime);
  auto endpoint = runtime_->listen();
  if (!endpoint) return endpoint.error();
  identity_.endpoint = Endpoint{advertised, endpoint->port}.to_string();
  return ok_status();
}

void Controller::make_roster() {
  DaemonRecord self;
  self.pid = static_cast<int>(getpid());
  self.host_pid = self.pid;
  self.hostname = local_hostname();
  self.endpoint = identity_.endpoint;
  self.last_seen_ns = runtime_->now();
  const std::int64_t heartbeat_ms = params_.get_int("daemon_heartbeat_ms");
  roster_.emplace(
      RosterConfig{options_.daemons,
                   heartbeat_ms > 0 ? static_cast<TimeNs>(heartbeat_ms) * 1'000'000ULL : 0,
                   static_cast<std::uint32_t>(params_.get_int("daemon_heartbeat_misses"))},
      std::move(self));
}

void Controller::watch_signals() {
  signals_.interrupt =
      SignalWatch(loop_->base(), SIGINT, [this] { begin_stop(nullptr, "interrupted"); });
  signals_.terminate =
      SignalWatch(loop_->base(), SIGTERM, [this] { begin_stop(nullptr, "interrupted"); });
  signals_.child = SignalWatch(loop_->base(), SIGCHLD, [this] { reap_children(); });
}

Status Controller::start_rank_host() {
  // The controller hosts ranks like any daemon; its JobHost reports straight
  // to the job table.
  auto daemon_dir = create_daemon_directory(identity_.dvm.directory, kControllerVpid);
  if (!daemon_dir) return daemon_dir.error();
  RankReports reports;
  reports.output = [this](const JobOutput& output) {
    apply(jobs_->table.on_output(output, kControllerVpid));
  };
  reports.exit = [this](const RankExit& exit) {
    apply(jobs_->table.on_exit(exit, std::time(nullptr)));
  };
  reports.started = [this](const RanksStarted& started) {
    apply(jobs_->table.on_started(started));
  };
  auto ranks = RankHost::create(loop_->base(), *runtime_, log_, params_, kControllerVpid,
                                *daemon_dir, topology_->handle(), std::move(reports));
  if (!ranks) return ranks.error();
  rank_host_ = std::move(*ranks);
  return ok_status();
}

void Controller::claim_tags() {
  // The rank host claimed its own (job and PMIx bridge traffic) as it started.
  claims_.push_back(runtime_->own_control(
      {daemon_tags::report, daemon_tags::launch_failed, daemon_tags::link_lost,
       daemon_tags::heartbeat, daemon_tags::help, daemon_tags::problem_seen},
      [this](Vpid from, std::uint16_t tag, const Bytes& payload) {
        on_daemon_message(from, tag, payload);
      }));
  const bool bruck = params_.get_string("grpcomm_fence_topology") == "bruck";
  claims_.push_back(
      runtime_->own_fences(kBenchBarrierSignature, [this, bruck](const FenceDone& done) {
        apply(cli_.service.fence_done(done.key.signature, runtime_->now(), bruck));
      }));
  claims_.push_back(runtime_->own_control(
      {daemon_tags::counters_reply}, [this](Vpid, std::uint16_t, const Bytes& payload) {
        if (auto reply = wire_decode<CountersReply>(payload))
          apply(cli_.service.counters_arrived(*reply, roster_->living()));
      }));
  claims_.push_back(
      runtime_->own_control({job_tags::output, job_tags::exited, job_tags::ranks_started,
                             job_tags::stdin_ack, job_tags::aborted},
                            [this](Vpid from, std::uint16_t tag, const Bytes& payload) {
                              on_job_message(from, tag, payload);
                            }));
  claims_.push_back(
      runtime_->own_control({pmix_tags::publish, pmix_tags::lookup, pmix_tags::unpublish},
                            [this](Vpid from, std::uint16_t tag, const Bytes& payload) {
                              publish_->on_control(from, tag, payload);
                            }));
  claims_.push_back(runtime_->own_control(
      {pmix_tags::spawn},
      [this](Vpid from, std::uint16_t, const Bytes& payload) { on_spawn(from, payload); }));
  claims_.push_back(runtime_->own_control({pmix_tags::notify}, [this](Vpid from, std::uint16_t,
                                                                      const Bytes& payload) {
    // A rank's event for ranks beyond its daemon: to every daemon.
    if (auto event = wire_decode<PmixEvent>(payload)) {
      runtime_->broadcast(pmix_tags::event, payload);
    } else {
      log_.error("a malformed PMIx event from daemon %u: %s", from, event.error().message.c_str());
    }
  }));
}

}  // namespace grove
