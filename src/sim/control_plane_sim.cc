#include "sim/control_plane_sim.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "daemon/control_plane/controller_watch.h"
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
  };
  Kind kind = Kind::heartbeat;
  Vpid from = 0;
  Heartbeat beat;
  Vpid peer = 0;
  std::string reason;
};

struct SimEvent {
  enum class Kind : std::uint8_t { tick, deliver, partition, crash };
  Kind kind = Kind::tick;
  Vpid process = 0;       // who handles it (tick, deliver)
  std::size_t fault = 0;  // partition, crash: which
  Message message;
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
        alive_(options.daemons, true) {}

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
    }
    // The endpoint table, departures (the engine's concern), notices and
    // progress change nothing here.
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
