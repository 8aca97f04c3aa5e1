#include "sim/control_plane_sim.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "daemon/control_plane/controller_watch.h"
#include "daemon/control_plane/job_table.h"
#include "sim/event_queue.h"
#include "util/random_stream.h"

namespace grove {
namespace {

struct Message {
  enum class Kind : std::uint8_t {
    heartbeat,  // daemon -> controller
    answer,     // controller -> daemon: the heartbeat's bytes back
    evicted,    // controller -> daemon
    link_lost,  // daemon -> controller: its link to `peer` failed
    link_down,  // to a daemon from itself: it notices its link to `peer` failed
    closed,     // the sender's connection closed (its process ended)
    job,        // a job message (`tag`, `payload`): the job table's or a rank host's
  };
  Kind kind = Kind::heartbeat;
  Vpid from = 0;
  Heartbeat beat;
  Vpid peer = 0;
  std::string reason;
  std::uint16_t tag = 0;
  Bytes payload{};
};

struct SimEvent {
  enum class Kind : std::uint8_t {
    tick,
    deliver,
    partition,
    crash,
    submit,     // a grove run reaches the controller (`fault`: which SimJob)
    job_timer,  // the job table's timer (`job`, `timer`, `generation`)
    ranks_up,   // a rank host's ranks of `job` have started
    rank_done,  // a rank (`job`, `rank`) of the host's ends by itself
  };
  Kind kind = Kind::tick;
  Vpid process = 0;       // who handles it (tick, deliver, the job kinds)
  std::size_t fault = 0;  // partition, crash, submit: which
  Message message;
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  job_table::TimerKind timer = job_table::TimerKind::timeout;
  std::uint64_t generation = 0;
};

class ControlPlaneSim {
 public:
  explicit ControlPlaneSim(const ControlPlaneSimOptions& options)
      : options_(options),
        jitter_(RandomStream::split(options.seed, "jitter")),
        roster_(
            RosterConfig{options.daemons, options.heartbeat_interval_ns, options.heartbeat_misses},
            DaemonRecord{}),
        watches_(options.daemons),
        alive_(options.daemons, true),
        jobs_(JobTableConfig{"sim", 4 << 20}),
        hosted_(options.daemons) {}

  ControlPlaneSimResult run();

 private:
  void start();
  void handle(const SimEvent& event);
  void on_controller(const Message& message);
  void on_daemon(Vpid self, const Message& message);
  void send(Vpid from, Vpid to, Message message);
  void leave(Vpid vpid, const std::string& reason);
  void crash(Vpid vpid);
  void apply(roster::Outbox out);
  // The jobs: the controller's table, and each process's rank host.
  void handle_job_event(const SimEvent& event);
  void apply(job_table::Outbox out);
  void on_job_message(Vpid self, const Message& message);
  void host_launch(Vpid self, const JobSpec& spec);
  void end_rank(Vpid self, std::uint32_t job, std::uint32_t rank, RankExit exit);
  std::int64_t now_s() const { return static_cast<std::int64_t>(now_ / 1'000'000'000); }
  // The time a stalled process runs again; 0 when it runs now.
  TimeNs stalled_until(Vpid vpid) const;
  static std::pair<Vpid, Vpid> link(Vpid a, Vpid b) { return {std::min(a, b), std::max(a, b)}; }

  const ControlPlaneSimOptions& options_;
  RandomStream jitter_;
  DaemonRoster roster_;
  std::vector<std::optional<ControllerWatch>> watches_;  // [vpid], daemons only
  std::vector<bool> alive_;
  std::set<std::pair<Vpid, Vpid>> broken_;
  std::map<std::pair<Vpid, Vpid>, TimeNs> link_clock_;  // FIFO per direction
  EventQueue<SimEvent> queue_;
  JobTable jobs_;
  std::map<std::pair<std::uint32_t, job_table::TimerKind>, std::uint64_t> timer_generation_;
  // [vpid]: its rank host's ranks (job, rank) still running, and each job's
  // run time there.
  std::vector<std::set<std::pair<std::uint32_t, std::uint32_t>>> hosted_;
  TimeNs now_ = 0;
  ControlPlaneSimResult result_;
};

void ControlPlaneSim::start() {
  // Every daemon reported and the table landed at time 0.
  for (Vpid vpid = 1; vpid < options_.daemons; ++vpid) {
    DaemonReport report;
    report.vpid = vpid;
    report.hostname = "node" + std::to_string(vpid);
    report.endpoint = "sim:" + std::to_string(vpid);
    roster_.on_report(vpid, report, 0);
    watches_[vpid].emplace(options_.heartbeat_interval_ns, options_.controller_timeout_ns, 0);
  }
  roster_.mark_running(0);
  // Each daemon's heartbeat timer starts at its own phase.
  RandomStream phase = RandomStream::split(options_.seed, "phase");
  queue_.push(options_.heartbeat_interval_ns, SimEvent{SimEvent::Kind::tick, 0, 0, {}});
  for (Vpid vpid = 1; vpid < options_.daemons; ++vpid) {
    queue_.push(phase.uniform(1, options_.heartbeat_interval_ns),
                SimEvent{SimEvent::Kind::tick, vpid, 0, {}});
  }
  for (std::size_t i = 0; i < options_.faults.partitions.size(); ++i) {
    queue_.push(options_.faults.partitions[i].at_ns, SimEvent{SimEvent::Kind::partition, 0, i, {}});
  }
  for (std::size_t i = 0; i < options_.faults.crashes.size(); ++i) {
    queue_.push(options_.faults.crashes[i].at_ns, SimEvent{SimEvent::Kind::crash, 0, i, {}});
  }
  for (std::size_t i = 0; i < options_.jobs.size(); ++i) {
    queue_.push(options_.jobs[i].submit_at_ns,
                SimEvent{SimEvent::Kind::submit, kControllerVpid, i, {}});
  }
}

ControlPlaneSimResult ControlPlaneSim::run() {
  start();
  while (!queue_.empty()) {
    auto [at, event] = queue_.pop();
    if (at > options_.duration_ns) break;
    now_ = at;
    ++result_.events;
    handle(event);
  }
  for (const DaemonRecord& record : roster_.records())
    result_.states.push_back(record.state);
  result_.running = alive_;
  return std::move(result_);
}

TimeNs ControlPlaneSim::stalled_until(Vpid vpid) const {
  for (const auto& stall : options_.faults.stalls) {
    if (stall.vpid == vpid && stall.from_ns <= now_ && now_ < stall.to_ns) return stall.to_ns;
  }
  return 0;
}

void ControlPlaneSim::handle(const SimEvent& event) {
  if (event.kind == SimEvent::Kind::partition) {
    const auto& partition = options_.faults.partitions[event.fault];
    broken_.insert(link(partition.a, partition.b));
    // Each daemon end notices once its link times out; a controller end is
    // left to the heartbeats' silence.
    for (auto [self, peer] : {std::pair{partition.a, partition.b}, {partition.b, partition.a}}) {
      if (self == kControllerVpid) continue;
      Message notice{Message::Kind::link_down, self, {}, peer, {}};
      queue_.push(now_ + options_.link_timeout_ns,
                  SimEvent{SimEvent::Kind::deliver, self, 0, std::move(notice)});
    }
    return;
  }
  if (event.kind == SimEvent::Kind::crash) {
    crash(options_.faults.crashes[event.fault].vpid);
    return;
  }
  const Vpid self = event.process;
  if (!alive_[self]) return;
  if (const TimeNs resume = stalled_until(self); resume != 0) {
    // Nothing runs in a stopped process; what reached it waits, in order.
    if (resume != kNever) queue_.push(resume, event);
    return;
  }
  if (event.kind != SimEvent::Kind::tick && event.kind != SimEvent::Kind::deliver) {
    handle_job_event(event);
    return;
  }
  if (event.kind == SimEvent::Kind::tick) {
    if (self == kControllerVpid) {
      apply(roster_.check_heartbeats(now_));
    } else {
      ControllerWatch::Beat beat = watches_[self]->beat(now_);
      send(self, kControllerVpid, Message{Message::Kind::heartbeat, self, beat.heartbeat, 0, {}});
      if (beat.leave) {
        leave(self, *beat.leave);
        return;
      }
    }
    queue_.push(now_ + options_.heartbeat_interval_ns, event);
    return;
  }
  if (self == kControllerVpid) {
    on_controller(event.message);
  } else {
    on_daemon(self, event.message);
  }
}

void ControlPlaneSim::on_controller(const Message& message) {
  roster_.heard_from(message.from, now_);
  switch (message.kind) {
    case Message::Kind::heartbeat:
      send(kControllerVpid, message.from,
           Message{Message::Kind::answer, kControllerVpid, message.beat, 0, {}});
      return;
    case Message::Kind::link_lost:
      apply(roster_.on_link_lost(message.from, message.peer));
      return;
    case Message::Kind::closed:
      apply(roster_.on_connection_closed(message.from));
      return;
    case Message::Kind::job:
      on_job_message(kControllerVpid, message);
      return;
    default:
      return;
  }
}

void ControlPlaneSim::on_daemon(Vpid self, const Message& message) {
  ControllerWatch& watch = *watches_[self];
  if (message.from == kControllerVpid) watch.heard(now_);
  switch (message.kind) {
    case Message::Kind::answer:
      watch.answered(message.beat, now_);
      return;
    case Message::Kind::evicted:
      leave(self, "evicted: " + message.reason);
      return;
    case Message::Kind::closed:
      if (message.from == kControllerVpid) leave(self, "lost the controller");
      return;
    case Message::Kind::link_down:
      send(self, kControllerVpid, Message{Message::Kind::link_lost, self, {}, message.peer, {}});
      return;
    case Message::Kind::job:
      on_job_message(self, message);
      return;
    default:
      return;
  }
}

void ControlPlaneSim::send(Vpid from, Vpid to, Message message) {
  if (broken_.count(link(from, to)) != 0) return;
  TimeNs at = now_ + options_.latency_ns + jitter_.below(options_.jitter_ns + 1);
  TimeNs& clock = link_clock_[{from, to}];
  at = std::max(at, clock);
  clock = at;
  queue_.push(at, SimEvent{SimEvent::Kind::deliver, to, 0, std::move(message)});
}

void ControlPlaneSim::leave(Vpid vpid, const std::string& reason) {
  result_.decisions.push_back(
      ControlPlaneDecision{now_, vpid, ControlPlaneDecision::Kind::left, reason});
  // Its process exits, and its connection with it.
  send(vpid, kControllerVpid, Message{Message::Kind::closed, vpid, {}, 0, {}});
  alive_[vpid] = false;
}

void ControlPlaneSim::crash(Vpid vpid) {
  if (!alive_[vpid]) return;
  if (vpid == kControllerVpid) {
    for (Vpid daemon = 1; daemon < options_.daemons; ++daemon)
      send(kControllerVpid, daemon, Message{Message::Kind::closed, kControllerVpid, {}, 0, {}});
  } else {
    send(vpid, kControllerVpid, Message{Message::Kind::closed, vpid, {}, 0, {}});
  }
  alive_[vpid] = false;
}

void ControlPlaneSim::apply(roster::Outbox out) {
  for (roster::Effect& effect : out) {
    if (auto* control = std::get_if<roster::SendControl>(&effect)) {
      if (control->tag != daemon_tags::evicted) continue;
      auto eviction = wire_decode<Eviction>(control->payload);
      send(kControllerVpid, control->to,
           Message{Message::Kind::evicted,
                   kControllerVpid,
                   {},
                   0,
                   eviction ? eviction->reason : std::string("?")});
    } else if (auto* kill = std::get_if<roster::KillProcess>(&effect)) {
      alive_[kill->vpid] = false;
    } else if (auto* loss = std::get_if<roster::AnnounceLoss>(&effect)) {
      result_.decisions.push_back(ControlPlaneDecision{
          now_, loss->vpid, ControlPlaneDecision::Kind::lost, loss->description});
      apply(jobs_.on_daemon_lost(loss->vpid, roster_.describe(loss->vpid), now_s()));
    }
    // The endpoint table, departures (the engine's concern), notices and
    // progress change nothing here.
  }
}

void ControlPlaneSim::handle_job_event(const SimEvent& event) {
  switch (event.kind) {
    case SimEvent::Kind::submit: {
      const SimJob& job = options_.jobs[event.fault];
      JobRequest request;
      request.apps.push_back(JobApp{{"sim-rank"}, {}, "/", job.np});
      request.timeout_s = job.timeout_s;
      JobPlaces places;
      for (const DaemonRecord& daemon : roster_.records()) {
        if (daemon.state != DaemonStateKind::up) continue;
        places.living.push_back(MapDaemon{daemon.vpid, options_.slots_per_daemon,
                                          "node" + std::to_string(daemon.vpid)});
      }
      apply(jobs_.submit(request, event.fault, places, now_s()));
      return;
    }
    case SimEvent::Kind::job_timer:
      if (timer_generation_[{event.job, event.timer}] == event.generation)
        apply(jobs_.timer_fired(event.job, event.timer));
      return;
    case SimEvent::Kind::ranks_up: {
      RanksStarted started{event.job, {}};
      for (const auto& [job, rank] : hosted_[event.process]) {
        if (job != event.job) continue;
        started.ranks.push_back(rank);
        queue_.push(now_ + options_.jobs[event.fault].run_ns,
                    SimEvent{SimEvent::Kind::rank_done, event.process, event.fault, {}, job, rank});
      }
      send(event.process, kControllerVpid,
           Message{Message::Kind::job,
                   event.process,
                   {},
                   0,
                   {},
                   job_tags::ranks_started,
                   encode(started)});
      return;
    }
    default: {  // rank_done
      const SimJob& job = options_.jobs[event.fault];
      const bool fails = job.failing_rank == event.rank;
      end_rank(
          event.process, event.job, event.rank,
          RankExit{
              event.job, event.rank, ExitKind::exited, fails ? job.failing_status : 0, "", {}});
      return;
    }
  }
}

void ControlPlaneSim::end_rank(Vpid self, std::uint32_t job, std::uint32_t rank, RankExit exit) {
  if (hosted_[self].erase({job, rank}) == 0) return;  // ended already
  send(self, kControllerVpid,
       Message{Message::Kind::job, self, {}, 0, {}, job_tags::exited, encode(exit)});
}

void ControlPlaneSim::on_job_message(Vpid self, const Message& message) {
  switch (message.tag) {
    case job_tags::launch:
      if (auto spec = wire_decode<JobSpec>(message.payload)) host_launch(self, *spec);
      return;
    case job_tags::kill:
      if (auto ref = wire_decode<JobRef>(message.payload)) {
        std::vector<std::uint32_t> ranks;
        for (const auto& [job, rank] : hosted_[self]) {
          if (job == ref->job) ranks.push_back(rank);
        }
        for (std::uint32_t rank : ranks) {
          end_rank(self, ref->job, rank,
                   RankExit{ref->job, rank, ExitKind::signaled, 15, "Terminated", {}});
        }
      }
      return;
    case job_tags::ranks_started:
      if (auto started = wire_decode<RanksStarted>(message.payload)) {
        result_.ranks_started += started->ranks.size();
        apply(jobs_.on_started(*started));
      }
      return;
    case job_tags::exited:
      if (auto exit = wire_decode<RankExit>(message.payload)) apply(jobs_.on_exit(*exit, now_s()));
      return;
    default:  // cleanup, ranks gone: nothing held here
      return;
  }
}

void ControlPlaneSim::host_launch(Vpid self, const JobSpec& spec) {
  bool hosts = false;
  for (const RankPlacement& rank : spec.ranks) {
    if (rank.daemon != self) continue;
    hosted_[self].insert({spec.job, rank.rank});
    hosts = true;
  }
  if (!hosts) return;
  // Job n is the n-th submitted: its SimJob says how its ranks run.
  SimEvent up{SimEvent::Kind::ranks_up, self, spec.job - 1, {}, spec.job};
  queue_.push(now_ + options_.rank_start_ns, std::move(up));
}

void ControlPlaneSim::apply(job_table::Outbox out) {
  for (job_table::Effect& effect : out) {
    if (auto* broadcast = std::get_if<job_table::Broadcast>(&effect)) {
      for (const DaemonRecord& daemon : roster_.records()) {
        if (daemon.state != DaemonStateKind::up) continue;
        send(kControllerVpid, daemon.vpid,
             Message{Message::Kind::job,
                     kControllerVpid,
                     {},
                     0,
                     {},
                     broadcast->tag,
                     broadcast->payload});
      }
    } else if (auto* event = std::get_if<job_table::CliEvent>(&effect)) {
      if (!event->final) continue;
      result_.jobs_ended.push_back(SimJobEnd{now_, event->event.value("job", 0u),
                                             event->event.value("status", -1),
                                             event->event.value("message", std::string())});
    } else if (auto* check = std::get_if<job_table::CheckCliQueue>(&effect)) {
      apply(jobs_.cli_queue(check->job, 0));
    } else if (auto* arm = std::get_if<job_table::ArmTimer>(&effect)) {
      const std::uint64_t generation = ++timer_generation_[{arm->job, arm->kind}];
      SimEvent fire{SimEvent::Kind::job_timer, kControllerVpid, 0, {}, arm->job};
      fire.timer = arm->kind;
      fire.generation = generation;
      queue_.push(now_ + arm->ms * 1'000'000, std::move(fire));
    } else if (auto* cancel = std::get_if<job_table::CancelTimer>(&effect)) {
      ++timer_generation_[{cancel->job, cancel->kind}];
    }
    // PMIx events, the publish store, spawns, input and notices: nothing
    // here asks for them.
  }
}

}  // namespace

ControlPlaneSimResult run_control_plane_sim(const ControlPlaneSimOptions& options) {
  return ControlPlaneSim(options).run();
}

std::string describe(const ControlPlaneDecision& decision) {
  char at[32];
  std::snprintf(at, sizeof at, "t=%.3fs", static_cast<double>(decision.at_ns) / 1e9);
  if (decision.kind == ControlPlaneDecision::Kind::lost) {
    return std::string(at) + " the controller declared " + decision.reason;
  }
  return std::string(at) + " daemon " + std::to_string(decision.vpid) + " left: " + decision.reason;
}

}  // namespace grove
