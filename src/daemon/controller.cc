#include "daemon/controller.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/dvm_events.h"

namespace grove {
namespace {

// How long a daemon lost during an srun start waits for srun's own exit
// (Slurm's cancel of the step, then srun's report, took about 5 s under
// sanitizers on 2 cores).
constexpr std::int64_t kSrunExitGraceMs = 15000;

}  // namespace

Controller::Controller(const ParamRegistry& params, Log& log, HelpCatalog& help,
                       ControllerOptions options)
    : params_(params),
      log_(log),
      help_(help),
      options_(std::move(options)),
      launch_(LaunchSupervisor(params.get_int("daemon_report_timeout_ms"), kSrunExitGraceMs)),
      stopping_(StopSequence(params.get_int("daemon_stop_timeout_ms"))) {}

Controller::~Controller() {
  // Every event goes before the base it lives on: event_free takes the base's
  // lock, and a freed base's lock may read as held forever. Claims on tags
  // first: nothing is routed to what is ending.
  claims_.clear();
  jobs_.reset();
  publish_.reset();
  rank_host_.reset();
  topology_.reset();  // after the PMIx server, which uses it
  remote_.clear();
  control_.reset();
  launch_.report_deadline = Timer();
  heartbeat_timer_ = Timer();
  for (Timer& timer : stopping_.timers)
    timer = Timer();
  stopping_.exit_when_answered = Timer();
  for (Timer& timer : cli_.timers)
    timer = Timer();
  cli_.flight.stall_watch = Timer();
  launch_.failure_timer = Timer();
  launch_.step_end_timer = Timer();
  launch_.growth.reset();
  launch_.grow_deadline = Timer();
  launch_.respawns.clear();
  signals_.interrupt = SignalWatch();
  signals_.terminate = SignalWatch();
  signals_.child = SignalWatch();
  runtime_.reset();
  loop_.reset();
}

int Controller::run() {
  if (auto status = start(); !status) {
    apply(launch_.supervisor.fail(status.error().message));
    return 1;
  }
  loop_->run();
  return stopping_.exit_code;
}

void Controller::on_daemon_message(Vpid from, std::uint16_t tag, const Bytes& payload) {
  switch (tag) {
    case daemon_tags::report: {
      auto report = wire_decode<DaemonReport>(payload);
      if (!report) {
        log_.error("daemon %u sent a %s", from, report.error().message.c_str());
        return;
      }
      on_report(from, *report);
      return;
    }
    case daemon_tags::launch_failed: {
      if (auto failure = wire_decode<LaunchFailure>(payload)) {
        on_launch_failed(failure->vpid, failure->reason);
      }
      return;
    }
    case daemon_tags::link_lost: {
      if (auto lost = wire_decode<LinkLost>(payload)) on_link_lost(from, lost->peer);
      return;
    }
    case daemon_tags::heartbeat:
      // The answer is how a daemon knows the controller is alive and well;
      // it carries the daemon's own send time back, for its round trip.
      runtime_->send_control(from, daemon_tags::heartbeat, payload);
      return;
    case daemon_tags::help: {
      auto help = wire_decode<ShowHelpTopic>(payload);
      if (help) on_help(*help);
      return;
    }
    case daemon_tags::problem_seen: {
      if (auto problem = wire_decode<ProblemSeen>(payload)) on_problem(from, problem->text);
      return;
    }
  }
}

void Controller::on_report(Vpid from, const DaemonReport& report) {
  if (auto unexpected = roster_->unexpected_report(from, report.vpid)) {
    if (!unexpected->empty()) log_.error("%s; ignored", unexpected->c_str());
    return;
  }
  auto endpoint = Endpoint::parse(report.endpoint);
  if (!endpoint) {
    log_.error("daemon %u reported a bad endpoint '%s'", from, report.endpoint.c_str());
    return;
  }
  if (auto status = runtime_->add_peer(from, *endpoint); !status) {
    log_.error("daemon %u reported an endpoint we cannot use: %s", from,
               status.error().message.c_str());
    return;
  }
  apply(roster_->on_report(from, report, runtime_->now()));
}

void Controller::on_broadcast_done(const BroadcastDone& done) {
  if (launch_.supervisor.phase() == LaunchSupervisor::Phase::starting &&
      done.tag == daemon_tags::endpoint_table && done.op_id == launch_.endpoint_table_op) {
    become_ready();
    return;
  }
  if (stopping_.sequence.stopping() && done.tag == daemon_tags::shutdown &&
      done.op_id == stopping_.shutdown_op) {
    apply(stopping_.sequence.acknowledged());
    return;
  }
  if (!cli_.service.benchmarking()) return;
  apply(cli_.service.broadcast_done(done.tag, done.op_id, done.started_ns, done.completed_ns,
                                    done.wire_bytes, runtime_->now(),
                                    (done.flags & kFrameAcksMayWait) != 0));
}

void Controller::on_help(const ShowHelpTopic& help) {
  // Daemons forward their topics here; once-only topics print once per DVM.
  show_help(help_, help.file, help.topic, help.args);
}

void Controller::on_peer_lost(Vpid peer) {
  apply(roster_->on_connection_closed(peer));
  if (jobs_) settle_leaving();
}

void Controller::on_link_lost(Vpid reporter, Vpid peer) {
  apply(roster_->on_link_lost(reporter, peer));
}

void Controller::daemon_lost(Vpid vpid, const std::string& reason, bool may_still_run) {
  apply(roster_->lose(vpid, reason, may_still_run));
}

void Controller::on_startup_loss(const std::string& message) {
  // Under srun (--kill-on-bad-exit) the step's own exit may follow and name
  // the node that failed first: the supervisor waits for it a while.
  const bool step_running = options_.launcher == RemoteLauncherKind::slurm && remote_.running() > 0;
  apply(launch_.supervisor.daemon_lost(message, step_running));
}

void Controller::on_daemon_announced_lost(Vpid vpid, const std::string& description) {
  runtime_->broadcast(pmix_tags::event, encode(daemon_lost_event(vpid, description)));
  apply(jobs_->table.on_daemon_lost(vpid, roster_->describe(vpid), std::time(nullptr)));
  apply(cli_.service.daemon_lost(roster_->living()));
  consider_respawn(vpid);
}

void Controller::apply(roster::Outbox out) {
  for (roster::Effect& effect : out) {
    std::visit(
        [this](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, roster::SendControl>) {
            // Told to leave, it may still run for a while (grove grow and
            // respawns wait for it: controller_respawn.cc).
            if (e.tag == daemon_tags::evicted) launch_.evicted_ns[e.to] = runtime_->now();
            runtime_->send_control(e.to, e.tag, std::move(e.payload));
          } else if constexpr (std::is_same_v<T, roster::BroadcastEndpointTable>) {
            launch_.endpoint_table_op =
                runtime_->broadcast(daemon_tags::endpoint_table, encode(e.table));
          } else if constexpr (std::is_same_v<T, roster::KillProcess>) {
            kill(e.pid, SIGKILL);
          } else if constexpr (std::is_same_v<T, roster::DeclareDeparture>) {
            runtime_->declare_departure(e.vpid);
          } else if constexpr (std::is_same_v<T, roster::AnnounceLoss>) {
            on_daemon_announced_lost(e.vpid, e.description);
          } else if constexpr (std::is_same_v<T, roster::StartupLoss>) {
            on_startup_loss(e.message);
          } else if constexpr (std::is_same_v<T, roster::Notice>) {
            if (e.level == roster::Notice::Level::error) {
              log_.error("%s", e.text.c_str());
            } else {
              log_.verbose("daemon", 1, "%s", e.text.c_str());
            }
          } else if constexpr (std::is_same_v<T, roster::AdmitJoiner>) {
            admit_joiner(e);
          } else {
            static_assert(std::is_same_v<T, roster::ReportProgress>, "an effect without a driver");
            std::fprintf(stderr, "grove: %zu/%u daemons reported\n", e.reported, e.total);
          }
        },
        effect);
  }
}

void Controller::check_heartbeats() {
  log_.flush_limited();  // a burst of limited lines that stopped is still counted
  apply(roster_->check_heartbeats(runtime_->now()));
}

void Controller::reap_children() {
  // Only our own children, by pid: ranks this controller hosts are reaped by
  // its JobHost.
  for (const auto& [vpid, pid] : roster_->unreaped_children()) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) != pid) continue;
    const std::string how = WIFSIGNALED(status)
                                ? "killed by signal " + std::to_string(WTERMSIG(status))
                                : "exited with status " + std::to_string(WEXITSTATUS(status));
    apply(roster_->on_process_ended(vpid, how));
  }
  remote_.reap();
  if (rank_host_) rank_host_->reap();
  if (stopping_.sequence.stopping()) apply(stopping_.sequence.process_exited());
}

}  // namespace grove
