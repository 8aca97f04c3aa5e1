#include "sim/flight_perturb.h"

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <optional>
#include <set>

#include "sim/flight_replay.h"
#include "sim/invariant_checker.h"
#include "util/random_stream.h"

namespace grove {
namespace {

constexpr std::size_t kMaxProblems = 20;
// After the last recorded input, the run has this long to go quiet.
constexpr TimeNs kQuietLimitNs = 600'000'000'000;

struct Event {
  enum class Kind : std::uint8_t { frame, timer, input, kill, declare } kind = Kind::frame;
  Vpid daemon = 0;
  Vpid from = 0;                       // frame
  WireFrame frame{};                   // frame
  TimerId timer{};                     // timer
  std::uint64_t token = 0;             // timer: the arming it belongs to
  bool drawn = false;                  // kill: the perturbation's (not a death the history had)
  const FlightInput* input = nullptr;  // input
};

struct Daemon {
  const FlightRecording* recording = nullptr;
  std::unique_ptr<Engine> engine;
  // Its inputs [0, end) are the history: past `end` came a frame its sender
  // sent after its own recording was taken, and what follows depends on it.
  std::size_t end = 0;
  std::size_t cut = 0;
  bool alive = true;
  // Its own clock at the cut (each host's clock is its own): time t after
  // the cut is base + t to its engine.
  TimeNs base = 0;
  TimeNs last_now = 0;
  // The frames its inputs before the cut sent: by (input, effect).
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::pair<Vpid, WireFrame>> sent;
  std::map<TimerId, TimeNs> due_at_cut;    // armed before the cut: each one's deadline
  std::map<TimerId, std::uint64_t> armed;  // after: by the token of its latest arming
  // What the engine told its driver (fence ends, deliveries, finished
  // broadcasts), counted over the whole history: here, and for real before
  // each input. A driver's input follows what it was told before it (a job
  // ends after its fences; a barrier round's contribution follows the
  // round's broadcast), so one waits until the run told the driver as much.
  std::array<std::uint64_t, 3> told{};
  std::vector<std::array<std::uint64_t, 3>> told_before;  // by input
  std::deque<std::size_t> due;            // driver inputs whose time has come, in order
  std::uint64_t fence_ends_recorded = 0;  // after the cut, for real
  std::uint64_t fence_ends = 0;           // after the cut, here
};

// Which of the driver's upcalls an effect is (Daemon::told), if one.
std::optional<std::size_t> upcall_of(std::uint8_t kind) {
  switch (kind) {
    case flight_effect_kind<FenceDone>:
      return 0;
    case flight_effect_kind<DeliverBroadcast>:
      return 1;
    case flight_effect_kind<BroadcastDone>:
      return 2;
  }
  return std::nullopt;
}

class Perturbation {
 public:
  Perturbation(const PerturbOptions& options, std::size_t daemons)
      : options_(options),
        checker_(daemons),
        daemons_(daemons),
        jitter_(RandomStream::split(options.seed, "perturb-jitter")),
        faults_(RandomStream::split(options.seed, "perturb-faults")) {}

  Status prepare(const std::vector<FlightRecording>& recordings, const ReplayReport& exact);
  void run();
  PerturbReport& report() { return report_; }

 private:
  void choose_cuts(const ReplayReport& exact);
  Status replay_to_cut(Vpid vpid);
  void schedule_after_cut();
  void plan_kills(TimeNs span);
  void handle(TimeNs at, Event& event);
  // Feeds the driver inputs that are due, in order, as far as what the
  // run told the driver allows.
  void feed_due(Vpid vpid, TimeNs at);
  void feed(Vpid vpid, TimeNs at, const FlightInput& input);
  void carry_out(Vpid vpid, TimeNs at, Outbox& out);
  void send(Vpid from, Vpid to, TimeNs at, WireFrame frame);
  void kill(Vpid vpid);
  void check_liveness();
  void schedule(TimeNs at, Event event) {
    queue_.emplace(std::pair{at, next_seq_++}, std::move(event));
  }
  void problem(std::string text) {
    if (report_.problems.size() < kMaxProblems) report_.problems.push_back(std::move(text));
  }
  TimeNs local_now(Vpid vpid, TimeNs at) {
    Daemon& daemon = daemons_[vpid];
    daemon.last_now = std::max(daemon.last_now, daemon.base + at);
    return daemon.last_now;
  }

  const PerturbOptions& options_;
  InvariantChecker checker_;
  std::vector<Daemon> daemons_;
  RandomStream jitter_, faults_;
  std::map<std::pair<TimeNs, std::uint64_t>, Event> queue_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t next_token_ = 1;
  const ReplayReport* exact_ = nullptr;
  std::map<std::pair<Vpid, Vpid>, TimeNs> link_clock_;               // a link's last arrival: FIFO
  std::set<std::pair<std::uint16_t, std::uint64_t>> open_releases_;  // by tag, op
  // Daemons the perturbation killed. From the first on, the driver's
  // recorded inputs belong to a history without that death: a job with
  // ranks on it would have been torn down, so its contributions are not
  // fed; the others come at their times, no longer waiting for what the
  // recorded driver was told first; and only the invariants and the
  // broadcasts' completion are held to the end.
  std::set<Vpid> drawn_deaths_;
  TimeNs span_ = 0;  // the longest of the daemons' recorded times after the cut
  PerturbReport report_;
};

Status Perturbation::prepare(const std::vector<FlightRecording>& recordings,
                             const ReplayReport& exact) {
  for (const FlightRecording& recording : recordings) {
    const Vpid self = recording.header.self;
    if (recording.header.fresh_daemons == 0) {
      return Error{"daemon " + std::to_string(self) +
                   " returned or joined: --perturb takes only daemons there from the start"};
    }
    daemons_[self].recording = &recording;
    const auto horizon = exact.horizon.find(self);
    daemons_[self].end = horizon == exact.horizon.end() ? recording.inputs.size()
                                                        : static_cast<std::size_t>(horizon->second);
  }
  exact_ = &exact;
  const Daemon& controller = daemons_[kControllerVpid];
  if (controller.recording == nullptr || controller.recording->inputs.empty())
    return Error{"--perturb needs the controller's recording (daemon-0.flight)"};
  std::set<Vpid> departed;
  for (const FlightInput& input : controller.recording->inputs) {
    if (input.kind == FlightInputKind::return_)
      return Error{"the controller declared a return: --perturb does not take one yet"};
    if (input.kind == FlightInputKind::departure) departed.insert(input.peer);
  }
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid) {
    if (daemons_[vpid].recording == nullptr && !departed.count(vpid)) {
      return Error{"daemon " + std::to_string(vpid) +
                   " has no recording and was not declared lost: its part after the cut is "
                   "unknown"};
    }
    if (daemons_[vpid].recording == nullptr) daemons_[vpid].alive = false;
  }
  choose_cuts(exact);
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid) {
    if (daemons_[vpid].recording == nullptr) continue;
    if (Status replayed = replay_to_cut(vpid); !replayed) return replayed;
  }
  schedule_after_cut();
  return ok_status();
}

// Each daemon's inputs up to the cut's time, then moved back until the cut
// is consistent: a frame received before it was sent before its sender's,
// and an input the driver made while carrying out another is on the same
// side as that other.
void Perturbation::choose_cuts(const ReplayReport& exact) {
  // Each by its own clock: the same fraction of its own recorded span.
  for (Daemon& daemon : daemons_) {
    if (daemon.recording == nullptr || daemon.end == 0) continue;
    const auto& inputs = daemon.recording->inputs;
    const auto last = inputs.begin() + static_cast<std::ptrdiff_t>(daemon.end);
    const TimeNs first_ns = inputs.front().now, last_ns = (last - 1)->now;
    const TimeNs at =
        first_ns + static_cast<TimeNs>(options_.cut * static_cast<double>(last_ns - first_ns));
    daemon.cut = static_cast<std::size_t>(
        std::upper_bound(inputs.begin(), last, at,
                         [](TimeNs when, const FlightInput& input) { return when < input.now; }) -
        inputs.begin());
  }
  for (bool moved = true; moved;) {
    moved = false;
    for (const MatchedFrame& match : exact.matches) {
      Daemon& receiver = daemons_[match.to];
      if (match.received < receiver.cut && match.sent_by >= daemons_[match.from].cut) {
        receiver.cut = match.received;
        moved = true;
      }
    }
    for (Daemon& daemon : daemons_) {
      if (daemon.recording == nullptr) continue;
      const auto& inputs = daemon.recording->inputs;
      for (std::size_t i = daemon.cut; i < daemon.end; ++i) {
        if (inputs[i].parent > 0 && inputs[i].parent - 1 < daemon.cut) {
          daemon.cut = inputs[i].parent - 1;
          moved = true;
        }
      }
    }
  }
}

Status Perturbation::replay_to_cut(Vpid vpid) {
  Daemon& daemon = daemons_[vpid];
  ReplayOptions replay_options;
  replay_options.weakened = options_.weakened;
  auto engine = replay_engine(*daemon.recording, replay_options);
  if (!engine) return engine.error();
  daemon.engine = std::move(*engine);
  const auto& inputs = daemon.recording->inputs;
  for (std::size_t i = 0; i < daemon.cut; ++i) {
    const FlightInput& input = inputs[i];
    if (input.kind == FlightInputKind::timer) {
      daemon.due_at_cut.erase(TimerId{static_cast<TimerKind>(input.timer_kind),
                                      static_cast<TopologyKind>(input.timer_topology),
                                      input.number});
    }
    Outbox out;
    if (Status fed = feed_recorded_input(*daemon.engine, input, out); !fed) return fed;
    daemon.last_now = input.now;
    for (std::size_t e = 0; e < out.mutable_effects().size(); ++e) {
      Effect& effect = out.mutable_effects()[e];
      if (auto* sent = std::get_if<SendFrame>(&effect)) {
        daemon.sent.emplace(std::pair{std::uint64_t{i}, static_cast<std::uint32_t>(e + 1)},
                            std::pair{sent->target, std::move(sent->frame)});
      } else if (const auto* set = std::get_if<SetTimer>(&effect)) {
        daemon.due_at_cut[set->id] = set->deadline_ns;
      } else if (const auto* cancel = std::get_if<CancelTimer>(&effect)) {
        daemon.due_at_cut.erase(cancel->id);
      } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&effect)) {
        if (Status held = checker_.on_deliver(vpid, *deliver); !held) problem(held.error().message);
      } else if (const auto* done = std::get_if<FenceDone>(&effect)) {
        if (Status held = checker_.on_fence_done(vpid, *done); !held) problem(held.error().message);
      }
    }
  }
  report_.kept[vpid] = daemon.cut;
  daemon.base = daemon.cut > 0 ? inputs[daemon.cut - 1].now : inputs.empty() ? 0 : inputs[0].now;
  if (daemon.end > 0) span_ = std::max(span_, inputs[daemon.end - 1].now - daemon.base);
  std::array<std::uint64_t, 3> told{};
  daemon.told_before.resize(daemon.end);
  for (std::size_t i = 0; i < daemon.end; ++i) {
    daemon.told_before[i] = told;
    if (i == daemon.cut) daemon.told = told;  // the replay told its driver as much
    for (const FlightEffect& effect : inputs[i].effects) {
      if (auto upcall = upcall_of(effect.kind)) ++told[*upcall];
    }
  }
  if (daemon.cut == daemon.end) daemon.told = told;
  // What it did for real after the cut that the perturbed run must also do.
  daemon.fence_ends_recorded = told[0] - daemon.told[0];
  return ok_status();
}

void Perturbation::schedule_after_cut() {
  // Frames in flight at the cut: each sender's sent before it, in the order
  // they went out, after those its receiver had taken before its own cut.
  for (Vpid from = 0; from < daemons_.size(); ++from) {
    Daemon& sender = daemons_[from];
    const auto order = exact_->wire_order.find(from);
    if (sender.recording == nullptr || order == exact_->wire_order.end()) continue;
    std::map<Vpid, std::vector<WireFrame>> links;
    for (const auto& key : order->second) {
      auto frame = sender.sent.find(key);
      if (key.first >= sender.cut || frame == sender.sent.end()) continue;
      links[frame->second.first].push_back(std::move(frame->second.second));
    }
    for (auto& [to, frames] : links) {
      const Daemon& receiver = daemons_[to];
      if (receiver.recording == nullptr) continue;  // died: lost with it
      std::size_t received = 0;
      for (std::size_t i = 0; i < receiver.cut; ++i) {
        const FlightInput& input = receiver.recording->inputs[i];
        received += input.kind == FlightInputKind::frame && input.peer == from ? 1 : 0;
      }
      if (received > frames.size()) {
        problem("daemon " + std::to_string(to) + " received more frames from " +
                std::to_string(from) + " before the cut than were sent before it");
        continue;
      }
      for (std::size_t i = received; i < frames.size(); ++i) {
        send(from, to, 0, std::move(frames[i]));
        ++report_.in_flight;
      }
    }
    sender.sent.clear();
  }
  std::set<Vpid> departed;
  for (const FlightInput& input : daemons_[kControllerVpid].recording->inputs)
    if (input.kind == FlightInputKind::departure) departed.insert(input.peer);
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid) {
    Daemon& daemon = daemons_[vpid];
    if (daemon.recording == nullptr) continue;
    // Declared lost before the cut: dead from it on.
    if (!daemons_[kControllerVpid].engine->membership().is_alive(vpid)) kill(vpid);
    const TimeNs base = daemon.base;
    // Each timer armed at the cut fires when it was due (a re-arming is a
    // new SetTimer: the last one seen is the one that runs).
    for (const auto& [id, deadline] : daemon.due_at_cut) {
      const std::uint64_t token = next_token_++;
      daemon.armed[id] = token;
      Event fire{Event::Kind::timer, vpid};
      fire.timer = id;
      fire.token = token;
      schedule(deadline > base ? deadline - base : 0, std::move(fire));
    }
    const auto& inputs = daemon.recording->inputs;
    for (std::size_t i = daemon.cut; i < daemon.end; ++i) {
      const FlightInput& input = inputs[i];
      if (input.kind == FlightInputKind::frame || input.kind == FlightInputKind::timer) continue;
      Event event{Event::Kind::input, vpid};
      event.input = &input;
      schedule(input.now > base ? input.now - base : 0, std::move(event));
    }
    // One that died for real (the controller declared it lost) dies where
    // its recording ends.
    if (vpid != kControllerVpid && departed.count(vpid) != 0) {
      const TimeNs last = inputs.empty() ? base : inputs.back().now;
      schedule(last > base ? last - base + 1 : 1, Event{Event::Kind::kill, vpid});
    }
  }
  plan_kills(std::max<TimeNs>(span_, 1));
}

void Perturbation::plan_kills(TimeNs span) {
  std::vector<Vpid> candidates;
  for (Vpid vpid = 1; vpid < daemons_.size(); ++vpid) {
    if (daemons_[vpid].recording != nullptr && daemons_[vpid].alive) candidates.push_back(vpid);
  }
  faults_.shuffle(candidates);
  for (std::uint32_t k = 0; k < options_.kills && k < candidates.size(); ++k) {
    const TimeNs at = faults_.below(span + 1);
    Event kill{Event::Kind::kill, candidates[k]};
    kill.drawn = true;
    schedule(at, std::move(kill));
    Event declare{Event::Kind::declare, kControllerVpid};
    declare.from = candidates[k];
    schedule(at + faults_.uniform(options_.detect_min_ns, options_.detect_max_ns),
             std::move(declare));
    report_.killed.push_back(candidates[k]);
  }
}

void Perturbation::run() {
  while (!queue_.empty()) {
    auto first = queue_.begin();
    const TimeNs at = first->first.first;
    if (at > span_ + kQuietLimitNs) {
      problem("still busy " + std::to_string(kQuietLimitNs / 1'000'000'000) +
              " s after the last recorded input");
      return;
    }
    Event event = std::move(first->second);
    queue_.erase(first);
    handle(at, event);
  }
  check_liveness();
}

void Perturbation::handle(TimeNs at, Event& event) {
  Daemon& daemon = daemons_[event.daemon];
  if (!daemon.alive) return;
  Outbox out;
  switch (event.kind) {
    case Event::Kind::kill:
      kill(event.daemon);
      if (event.drawn) drawn_deaths_.insert(event.daemon);
      return;
    case Event::Kind::declare:
      if (!daemon.engine->membership().is_alive(event.from)) return;
      daemon.engine->declare_departure(local_now(event.daemon, at), event.from, out);
      break;
    case Event::Kind::frame:
      daemon.engine->on_frame(local_now(event.daemon, at), event.from, event.frame, out);
      break;
    case Event::Kind::timer: {
      auto armed = daemon.armed.find(event.timer);
      if (armed == daemon.armed.end() || armed->second != event.token) return;
      daemon.armed.erase(armed);
      daemon.engine->on_timer(local_now(event.daemon, at), event.timer, out);
      break;
    }
    case Event::Kind::input:
      daemon.due.push_back(static_cast<std::size_t>(event.input - daemon.recording->inputs.data()));
      feed_due(event.daemon, at);
      return;
  }
  ++report_.simulated_inputs;
  carry_out(event.daemon, at, out);
  feed_due(event.daemon, at);
}

void Perturbation::feed(Vpid vpid, TimeNs at, const FlightInput& recorded) {
  Daemon& daemon = daemons_[vpid];
  // A departure the perturbation declared already, or of a daemon it left
  // alive at the cut: the controller's membership says which.
  if (recorded.kind == FlightInputKind::departure &&
      !daemon.engine->membership().is_alive(recorded.peer)) {
    return;
  }
  if (recorded.kind == FlightInputKind::departure && daemons_[recorded.peer].alive)
    kill(recorded.peer);
  if (recorded.kind == FlightInputKind::contribute &&
      std::any_of(drawn_deaths_.begin(), drawn_deaths_.end(),
                  [&](Vpid dead) { return recorded.participants.contains(dead); })) {
    ++report_.dropped_inputs;
    return;
  }
  FlightInput input = recorded;
  input.now = local_now(vpid, at);
  Outbox out;
  std::uint64_t op = 0;
  if (input.kind == FlightInputKind::release) {
    op = daemon.engine->release_bcast(input.now, input.tag, input.data, out, input.flags);
    open_releases_.emplace(input.tag, op);
  } else if (Status fed = feed_recorded_input(*daemon.engine, input, out); !fed) {
    problem("daemon " + std::to_string(vpid) + ": " + fed.error().message);
    return;
  }
  ++report_.simulated_inputs;
  carry_out(vpid, at, out);
}

void Perturbation::carry_out(Vpid vpid, TimeNs at, Outbox& out) {
  Daemon& daemon = daemons_[vpid];
  for (Effect& effect : out.mutable_effects()) {
    if (auto* sent = std::get_if<SendFrame>(&effect)) {
      send(vpid, sent->target, at, std::move(sent->frame));
    } else if (const auto* set = std::get_if<SetTimer>(&effect)) {
      const std::uint64_t token = next_token_++;
      daemon.armed[set->id] = token;
      Event fire{Event::Kind::timer, vpid};
      fire.timer = set->id;
      fire.token = token;
      const TimeNs due = set->deadline_ns > daemon.base ? set->deadline_ns - daemon.base : 0;
      schedule(std::max(at, due), std::move(fire));
    } else if (const auto* cancel = std::get_if<CancelTimer>(&effect)) {
      daemon.armed.erase(cancel->id);
    } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&effect)) {
      ++daemon.told[1];
      if (Status held = checker_.on_deliver(vpid, *deliver); !held) problem(held.error().message);
    } else if (const auto* done = std::get_if<FenceDone>(&effect)) {
      ++daemon.fence_ends;
      ++daemon.told[0];
      if (Status held = checker_.on_fence_done(vpid, *done); !held) problem(held.error().message);
    } else if (const auto* finished = std::get_if<BroadcastDone>(&effect)) {
      ++daemon.told[2];
      open_releases_.erase({finished->tag, finished->op_id});
    }
  }
  if (Status held = daemon.engine->check_invariants_after_input(); !held)
    problem("daemon " + std::to_string(vpid) + ": engine invariant: " + held.error().message);
}

void Perturbation::feed_due(Vpid vpid, TimeNs at) {
  Daemon& daemon = daemons_[vpid];
  while (daemon.alive && !daemon.due.empty()) {
    const std::size_t next = daemon.due.front();
    const auto& needs = daemon.told_before[next];
    for (std::size_t k = 0; k < needs.size() && drawn_deaths_.empty(); ++k) {
      if (daemon.told[k] < needs[k]) return;
    }
    daemon.due.pop_front();
    feed(vpid, at, daemon.recording->inputs[next]);
  }
}

void Perturbation::send(Vpid from, Vpid to, TimeNs at, WireFrame frame) {
  if (to >= daemons_.size() || !daemons_[to].alive) return;  // lost with its receiver
  TimeNs& clock = link_clock_[{from, to}];
  clock = std::max(clock, at + options_.base_latency_ns + jitter_.below(options_.jitter_ns + 1));
  Event event{Event::Kind::frame, to};
  event.from = from;
  event.frame = std::move(frame);
  schedule(clock, std::move(event));
}

void Perturbation::kill(Vpid vpid) {
  daemons_[vpid].alive = false;
  daemons_[vpid].armed.clear();
  // A Bruck fence ends on each daemon by itself: I5 binds the living only.
  if (daemons_[vpid].engine &&
      daemons_[vpid].engine->config().fence_topology == FenceTopology::bruck)
    checker_.forget_fence_endings(vpid);
}

void Perturbation::check_liveness() {
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid) {
    const Daemon& daemon = daemons_[vpid];
    if (!daemon.alive || daemon.due.empty() || !drawn_deaths_.empty()) continue;
    const FlightInput& stuck = daemon.recording->inputs[daemon.due.front()];
    problem("daemon " + std::to_string(vpid) + ": " + describe_input(stuck) +
            " never came: it waits for fence ends, deliveries or finished broadcasts that "
            "the run never made");
  }
  for (const auto& [tag, op] : open_releases_) {
    problem("the controller's broadcast op " + std::to_string(op) + " (tag " + std::to_string(tag) +
            ") never completed");
  }
  if (daemons_[kControllerVpid].engine->oldest_open_broadcast())
    problem("the controller still holds an open broadcast once everything went quiet");
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid) {
    const Daemon& daemon = daemons_[vpid];
    if (!daemon.alive || daemon.fence_ends >= daemon.fence_ends_recorded || !drawn_deaths_.empty())
      continue;
    problem("daemon " + std::to_string(vpid) + " ended " + std::to_string(daemon.fence_ends) +
            " fences after the cut, and " + std::to_string(daemon.fence_ends_recorded) +
            " for real");
  }
}

}  // namespace

Result<PerturbReport> perturb_flights(const std::vector<FlightRecording>& recordings,
                                      const PerturbOptions& options) {
  if (options.cut < 0 || options.cut > 1) return Error{"--cut must be between 0 and 1"};
  ReplayOptions exact_options;
  exact_options.keep_matches = true;
  exact_options.weakened = options.weakened;
  auto exact = replay_flights(recordings, exact_options);
  if (!exact) return exact.error();
  if (!exact->ok())
    return Error{
        "the recordings do not replay exactly (grove sim --replay says where): a "
        "perturbation starts from a history that does"};
  Vpid highest = 0;
  for (const FlightRecording& recording : recordings)
    highest = std::max(highest, recording.header.self);
  for (const FlightRecording& recording : recordings) {
    if (recording.header.fresh_daemons > 0)
      highest = std::max(highest, static_cast<Vpid>(recording.header.fresh_daemons - 1));
  }
  Perturbation perturbation(options, std::size_t{highest} + 1);
  if (Status prepared = perturbation.prepare(recordings, *exact); !prepared)
    return prepared.error();
  perturbation.run();
  PerturbReport report = std::move(perturbation.report());
  report.seed = options.seed;
  return report;
}

std::vector<std::string> describe_perturb(const PerturbReport& report) {
  std::vector<std::string> lines;
  std::string kept;
  for (const auto& [vpid, inputs] : report.kept)
    kept += " " + std::to_string(vpid) + ":" + std::to_string(inputs);
  lines.push_back("perturbation seed " + std::to_string(report.seed) +
                  ": recorded inputs kept by daemon" + kept);
  std::string killed;
  for (Vpid vpid : report.killed)
    killed += " " + std::to_string(vpid);
  lines.push_back("  frames in flight at the cut: " + std::to_string(report.in_flight) +
                  "; inputs after it: " + std::to_string(report.simulated_inputs) +
                  "; killed:" + (killed.empty() ? " none" : killed) +
                  (report.dropped_inputs > 0 ? "; contributions of jobs on them not fed: " +
                                                   std::to_string(report.dropped_inputs)
                                             : std::string()));
  for (const std::string& problem : report.problems)
    lines.push_back("PROBLEM: " + problem);
  if (report.ok()) lines.push_back("every invariant held; every broadcast and fence ended");
  return lines;
}

}  // namespace grove
