#include "sim/simulator.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <variant>

#include "grpcomm/effect_driver.h"
#include "grpcomm/engine.h"
#include "grpcomm/messages.h"
#include "grpcomm/tags.h"
#include "rml/tree_validate.h"
#include "sim/event_queue.h"
#include "sim/fault_schedule.h"
#include "sim/invariant_checker.h"
#include "sim/pmix_fence_layer.h"
#include "util/random_stream.h"

namespace grove {
namespace {

struct FrameEvent {
  Vpid to = 0;
  Vpid from = 0;
  WireFrame frame;
};
struct TimerEvent {
  Vpid daemon = 0;
  TimerId id;
  std::uint64_t token = 0;
};
struct KillEvent {
  Vpid victim = 0;
};
struct DetectEvent {
  Vpid victim = 0;
};
struct ContributeEvent {
  Vpid daemon = 0;
  std::uint64_t round = 1;
};
// A shared NIC's next frame may be done (stale unless `generation` is still
// the NIC's: every change to what it carries reschedules).
struct NicEvent {
  Vpid daemon = 0;
  std::uint64_t generation = 0;
};
using EventBody =
    std::variant<FrameEvent, TimerEvent, KillEvent, DetectEvent, ContributeEvent, NicEvent>;

// A participant contributes to a round up to this long after it may: to the
// first after the start, to each next one after it finished the last.
constexpr TimeNs kContributeSpreadNs = 20'000;

std::string format_time(TimeNs ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fus", static_cast<double>(ns) / 1000.0);
  return text;
}

class Simulation {
 public:
  explicit Simulation(const SimOptions& options);
  SimResult run();

 private:
  void schedule(TimeNs at, EventBody body) { queue_.push(at, std::move(body)); }
  void handle(const EventBody& event);
  void drain(Vpid daemon, TimeNs now, Outbox& out);
  // Fair NIC sharing: hand the frames whose last byte left to the links and
  // schedule the NIC's next event.
  void service_nic(Vpid daemon, TimeNs now);
  void kill(Vpid victim, TimeNs now);
  void fail(const std::string& what);
  // The line is built only when tracing is on (`make` returns it): a
  // million-daemon run with --trace 0 built a string per event otherwise.
  template <typename MakeLine>
  void trace(MakeLine make) {
    if (options_.trace_lines > 0) trace_line(make());
  }
  void trace_line(std::string line);
  void plan_faults();
  bool fault_fires(Vpid daemon, const Outbox& out) const;
  void check_liveness();
  FenceRequest request_for(Vpid daemon);
  class EffectsOf;

  const SimOptions& options_;
  std::string signature_;              // the engines' name for the fence
  std::optional<SimPmixFences> pmix_;  // with options.pmix_fences
  // One stream per subsystem, split from the run's seed, so more draws in
  // one never move another's (docs/simulator.md, "Randomness").
  struct Streams {
    RandomStream participants, contribute, payloads, jitter, faults, detect;
  };
  Streams rng_;
  std::vector<Engine> engines_;  // one block: a million heap blocks cost seconds
  std::vector<bool> alive_;
  std::vector<bool> participant_;
  std::vector<Vpid> participants_;
  VpidSet participant_set_;
  // The modelled network: each daemon's NIC (one model or the other) and
  // the links' FIFO clocks.
  struct InFlight {
    FrameEvent frame;
    TimeNs latency = 0;
  };
  struct Wires {
    std::vector<DaemonNic> nics;                // NicSharing::fifo
    std::vector<SharedNic> shared_nics;         // NicSharing::fair
    std::vector<std::uint64_t> nic_generation;  // of shared_nics' next event
    std::unordered_map<std::uint64_t, InFlight> in_flight;
    std::uint64_t next_transfer = 1;
    LinkClock links;
  };
  Wires net_;
  EventQueue<EventBody> queue_;
  // Each daemon's armed timers, by the token their queued expiry carries
  // (the expiry of a timer re-armed or cancelled since finds another).
  struct Timers {
    std::map<std::pair<Vpid, TimerId>, std::uint64_t> armed;
    std::uint64_t next_token = 1;
  };
  Timers timers_;
  InvariantChecker checker_;
  Outbox outbox_;  // handle()'s, reused
  std::deque<std::string> trace_;
  struct Faults {
    std::vector<FaultSpec> planned;
    std::vector<bool> done;  // by index into planned
  };
  Faults faults_;
  // Each round's first contribution and last completion (UINT64_MAX and 0
  // until seen).
  struct Rounds {
    std::vector<TimeNs> start;
    std::vector<TimeNs> end;
  };
  Rounds rounds_;
  TimeNs now_ = 0;
  SimResult result_;
};

// One daemon's step: its effects, applied to the simulated world.
class Simulation::EffectsOf final : public EffectDriver {
 public:
  EffectsOf(Simulation& sim, Vpid daemon, TimeNs now, std::size_t sends_allowed)
      : sim_(sim), daemon_(daemon), now_(now), sends_allowed_(sends_allowed) {}

  void send(SendFrame& send) override {
    // A daemon dying mid-step sends only a prefix of its frames.
    if (sends_allowed_ == 0) return;
    --sends_allowed_;
    if (!sim_.alive_[send.target]) return;  // connection refused: nothing arrives
    const NetworkModel& network = sim_.options_.network;
    TimeNs latency = network.alpha_ns;
    if (network.jitter > 0) {
      auto spread = static_cast<TimeNs>(static_cast<double>(latency) * network.jitter);
      latency += sim_.rng_.jitter.uniform(0, spread);
    }
    if (network.sharing == NicSharing::fair) {
      const std::uint64_t token = sim_.net_.next_transfer++;
      sim_.net_.shared_nics[daemon_].add(now_, send.frame.size(), token, network);
      sim_.net_.in_flight.emplace(
          token, InFlight{FrameEvent{send.target, daemon_, std::move(send.frame)}, latency});
      sim_.service_nic(daemon_, now_);
      return;
    }
    TimeNs left = sim_.net_.nics[daemon_].transmit(now_, send.frame.size(), network);
    TimeNs arrival = sim_.net_.links.arrival(daemon_, send.target, left + latency);
    sim_.schedule(arrival, FrameEvent{send.target, daemon_, std::move(send.frame)});
  }

  void deliver(DeliverBroadcast& deliver) override {
    if (auto status = sim_.checker_.on_deliver(daemon_, deliver); !status) {
      sim_.fail(status.error().message);
    }
  }

  void fence_done(FenceDone& fence) override {
    if (auto status = sim_.checker_.on_fence_done(daemon_, fence); !status) {
      sim_.fail(status.error().message);
      return;
    }
    if (sim_.pmix_) {
      if (auto status = sim_.pmix_->fence_done(daemon_, fence); !status) {
        sim_.fail(status.error().message);
        return;
      }
    }
    sim_.trace([&] {
      return "d" + std::to_string(daemon_) + " fence round " +
             std::to_string(fence.key.generation) + " " +
             std::string(fence_status_name(fence.status));
    });
    std::uint64_t round = fence.key.generation;
    if (fence.status != FenceStatus::ok) {
      ++sim_.result_.rounds_failed;
      return;
    }
    sim_.rounds_.end[round] = std::max(sim_.rounds_.end[round], now_);
    if (round < sim_.options_.rounds) {
      sim_.schedule(now_ + sim_.rng_.contribute.uniform(0, kContributeSpreadNs),
                    ContributeEvent{daemon_, round + 1});
    }
  }

  void broadcast_done(BroadcastDone& done) override {
    if (auto status = sim_.checker_.on_broadcast_done(done, sim_.alive_); !status) {
      sim_.fail(status.error().message);
    }
    if (done.tag == tags::fence_release && done.ok) {
      sim_.result_.release_span_ns.push_back(done.completed_ns - done.started_ns);
    }
  }

  void set_timer(SetTimer& timer) override {
    std::uint64_t token = sim_.timers_.next_token++;
    sim_.timers_.armed[{daemon_, timer.id}] = token;
    sim_.schedule(std::max(timer.deadline_ns, now_), TimerEvent{daemon_, timer.id, token});
  }

  void cancel_timer(CancelTimer& cancel) override {
    sim_.timers_.armed.erase({daemon_, cancel.id});
  }

  void show_help(ShowHelpTopic& help) override {
    sim_.trace([&] { return "d" + std::to_string(daemon_) + " help " + help.topic; });
  }

  void membership_changed(MembershipChanged& changed) override {
    sim_.trace([&] {
      return "d" + std::to_string(daemon_) + " adopts epoch " + std::to_string(changed.epoch);
    });
    if (!sim_.options_.validate_trees) return;
    const Engine& engine = sim_.engines_[daemon_];
    for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release}) {
      if (auto status = validate_tree(engine.tree(kind), engine.membership()); !status) {
        sim_.fail("d" + std::to_string(daemon_) + " derived an invalid " +
                  std::string(topology_name(kind)) + " tree: " + status.error().message);
      }
    }
  }

 private:
  Simulation& sim_;
  Vpid daemon_;
  TimeNs now_;
  std::size_t sends_allowed_;
};

Simulation::Simulation(const SimOptions& options)
    : options_(options),
      rng_{RandomStream::split(options.seed, "participants"),
           RandomStream::split(options.seed, "contribute"),
           RandomStream::split(options.seed, "payloads"),
           RandomStream::split(options.seed, "jitter"),
           RandomStream::split(options.seed, "faults"),
           RandomStream::split(options.seed, "detect")},
      checker_(options.daemons) {
  std::vector<Vpid> daemons(options.daemons);
  for (Vpid i = 0; i < options.daemons; ++i)
    daemons[i] = i;
  Membership membership = *Membership::create(daemons);
  EngineConfig config;
  config.radices = options.radices;
  config.low_radix_release = options.low_radix_release;
  config.compress_threshold = options.compress_threshold;
  config.release_delay_ns = options.release_delay_ns;
  config.track_touched_ops = options.check_engines;
  // -2 means "only the first victim", set once the faults are planned; until
  // then (and with no faults at all) nobody delays.
  config.release_delay_target =
      options.release_delay_target == -2 ? std::int64_t{1} << 40 : options.release_delay_target;
  config.weakened = options.weakened_rules;
  config.tree_cache = std::make_shared<TreeCache>();
  // One inflation of a deflated release for all daemons, not one each.
  config.inflate_cache = std::make_shared<InflateCache>();
  signature_ = options.signature;
  if (options.pmix_fences) {
    pmix_.emplace(options.daemons, options.signature, config.max_payload);
    signature_ = pmix_->signature();
  }
  engines_.reserve(options.daemons);
  if (options.network.sharing == NicSharing::fair) {
    net_.shared_nics.reserve(options.daemons);
  } else {
    net_.nics.reserve(options.daemons);
  }
  for (Vpid i = 0; i < options.daemons; ++i) {
    config.self = i;
    engines_.emplace_back(config, membership);
    // Only the NIC model in use is built.
    if (options.network.sharing == NicSharing::fair) {
      net_.shared_nics.emplace_back(options.network.threads);
    } else {
      net_.nics.emplace_back(options.network.threads);
    }
  }
  alive_.assign(options.daemons, true);
  net_.nic_generation.assign(options.daemons, 0);
  participant_.assign(options.daemons, false);
  // Daemon i > 0 hosts participants with probability participant_fraction:
  // its draw's top 53 bits, as a fraction of 2^53, fall below it (exact in
  // doubles, so the same everywhere).
  const double hosts_below = options.participant_fraction * 0x1p53;
  for (Vpid i = 0; i < options.daemons; ++i) {
    participant_[i] = i == 0 || static_cast<double>(rng_.participants.next() >> 11) < hosts_below;
    if (participant_[i]) participants_.push_back(i);
  }
  participant_set_ = VpidSet::from_list(participants_);
  rounds_.start.assign(options.rounds + 1, UINT64_MAX);
  rounds_.end.assign(options.rounds + 1, 0);
  result_.seed = options.seed;
}

void Simulation::trace_line(std::string line) {
  trace_.push_back(format_time(now_) + " " + line);
  if (trace_.size() > options_.trace_lines) trace_.pop_front();
}

void Simulation::fail(const std::string& what) {
  if (!result_.ok) return;
  result_.ok = false;
  result_.violation = what;
}

void Simulation::plan_faults() {
  faults_.planned = options_.faults.empty() ? draw_faults(options_, rng_.faults) : options_.faults;
  if (options_.release_delay_target == -2 && !faults_.planned.empty()) {
    for (auto& engine : engines_)
      engine.set_release_delay_target(faults_.planned.front().victim);
  }
  faults_.done.assign(faults_.planned.size(), false);
  for (std::size_t i = 0; i < faults_.planned.size(); ++i) {
    if (faults_.planned[i].kind == FaultKind::at_time) {
      faults_.done[i] = true;
      schedule(faults_.planned[i].at_ns, KillEvent{faults_.planned[i].victim});
    }
  }
}

FenceRequest Simulation::request_for(Vpid /*daemon*/) {
  std::size_t share = options_.payload_bytes / std::max<std::size_t>(1, participants_.size());
  Bytes data(share);
  // Eight bytes per draw, least significant first.
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < share; ++i) {
    if (i % 8 == 0) bits = rng_.payloads.next();
    data[i] = static_cast<std::byte>(bits & 0xFF);
    bits >>= 8;
  }
  return FenceRequest{signature_, participant_set_, std::move(data)};
}

SimResult Simulation::run() {
  plan_faults();
  for (Vpid daemon : participants_)
    schedule(rng_.contribute.uniform(0, kContributeSpreadNs), ContributeEvent{daemon, 1});
  while (!queue_.empty() && result_.ok) {
    auto [at, event] = queue_.pop();
    now_ = at;
    if (now_ > options_.time_limit_ns) {
      fail("no progress within the time limit: a hang");
      break;
    }
    ++result_.events;
    handle(event);
    if ((result_.events & 0xFFFF) == 0 && options_.progress && !options_.progress(result_.events)) {
      result_.interrupted = true;
      break;
    }
  }
  result_.end_ns = now_;
  if (result_.ok && !result_.interrupted) check_liveness();
  if (!result_.ok) result_.trace.assign(trace_.begin(), trace_.end());
  for (std::uint32_t round = 1; round <= options_.rounds; ++round) {
    if (rounds_.end[round] >= rounds_.start[round] && rounds_.start[round] != UINT64_MAX) {
      result_.fence_ns.push_back(rounds_.end[round] - rounds_.start[round]);
    }
  }
  for (const auto& engine : engines_) {
    result_.traffic += engine.accounting();
    result_.per_daemon.push_back(engine.accounting().total());
    result_.parked += engine.stats().parked;
    result_.replays += engine.stats().replays;
    result_.rollup_resends += engine.stats().rollup_resends;
  }
  return result_;
}

void Simulation::handle(const EventBody& event) {
  // One outbox for every event, emptied first: an event's effects are all
  // applied (drain) before the next event is handled, and its storage is reused.
  Outbox& out = outbox_;
  out.clear();
  if (const auto* frame = std::get_if<FrameEvent>(&event)) {
    if (!alive_[frame->to]) return;
    if (options_.trace_lines > 0) {
      auto header = decode_frame_header(frame->frame.header, UINT32_MAX);
      if (header) {
        trace([&] {
          return "d" + std::to_string(frame->to) + " <- d" + std::to_string(frame->from) + " " +
                 std::string(frame_type_name(header->type)) + " " +
                 std::string(tag_name(header->tag)) + " " +
                 std::string(topology_name(header->topology)) + " op " +
                 std::to_string(header->op_id) + " v" + std::to_string(header->tree_version);
        });
      }
    }
    engines_[frame->to].on_frame(now_, frame->from, frame->frame, out);
    drain(frame->to, now_, out);
  } else if (const auto* timer = std::get_if<TimerEvent>(&event)) {
    auto found = timers_.armed.find({timer->daemon, timer->id});
    if (!alive_[timer->daemon] || found == timers_.armed.end() || found->second != timer->token)
      return;
    timers_.armed.erase(found);
    trace([&] {
      return "d" + std::to_string(timer->daemon) + " timer op " + std::to_string(timer->id.op_id);
    });
    engines_[timer->daemon].on_timer(now_, timer->id, out);
    drain(timer->daemon, now_, out);
  } else if (const auto* killed = std::get_if<KillEvent>(&event)) {
    kill(killed->victim, now_);
  } else if (const auto* detect = std::get_if<DetectEvent>(&event)) {
    trace([&] { return "controller learns d" + std::to_string(detect->victim) + " died"; });
    engines_[0].declare_departure(now_, detect->victim, out);
    drain(0, now_, out);
  } else if (const auto* nic = std::get_if<NicEvent>(&event)) {
    if (nic->generation == net_.nic_generation[nic->daemon]) service_nic(nic->daemon, now_);
    return;
  } else if (const auto* contribute = std::get_if<ContributeEvent>(&event)) {
    Vpid daemon = contribute->daemon;
    if (!alive_[daemon]) return;
    const std::uint64_t round = contribute->round;
    // A round that already ended without us (aborted for a lost participant)
    // is not joined late: like a job after a fence error, this daemon stops.
    if (engines_[daemon].fence_generation(signature_) + 1 != round) return;
    rounds_.start[round] = std::min(rounds_.start[round], now_);
    trace([&] {
      return "d" + std::to_string(daemon) + " contributes to round " + std::to_string(round);
    });
    if (!pmix_) {
      engines_[daemon].contribute(now_, request_for(daemon), out);
    } else if (auto request = pmix_->enter(daemon, round, request_for(daemon))) {
      engines_[daemon].contribute(now_, std::move(*request), out);
    }
    drain(daemon, now_, out);
  }
}

bool Simulation::fault_fires(Vpid daemon, const Outbox& out) const {
  for (std::size_t i = 0; i < faults_.planned.size(); ++i) {
    const FaultSpec& fault = faults_.planned[i];
    if (faults_.done[i] || fault.victim != daemon) continue;
    for (const Effect& effect : out.effects()) {
      if (fault.kind == FaultKind::on_release) {
        const auto* deliver = std::get_if<DeliverBroadcast>(&effect);
        if (!deliver || deliver->tag != tags::fence_release) continue;
        auto release = decode_fence_release_header(*deliver->payload);
        if (release && release->key.generation >= fault.round) return true;
      } else if (fault.kind == FaultKind::while_holding) {
        const auto* timer = std::get_if<SetTimer>(&effect);
        if (timer && timer->id.kind == TimerKind::release_hold) return true;
      }
    }
  }
  return false;
}

void Simulation::drain(Vpid daemon, TimeNs now, Outbox& out) {
  Engine& engine = engines_[daemon];
  // A triggered fault kills the daemon mid-forward: only a random prefix of
  // this step's sends leaves it (while holding, nothing was being sent).
  std::size_t sends_allowed = SIZE_MAX;
  bool dies = false;
  if (fault_fires(daemon, out)) {
    for (std::size_t i = 0; i < faults_.planned.size(); ++i) {
      if (faults_.planned[i].victim == daemon) faults_.done[i] = true;
    }
    std::size_t sends = 0;
    for (const Effect& effect : out.effects())
      sends += std::holds_alternative<SendFrame>(effect);
    sends_allowed = static_cast<std::size_t>(rng_.faults.uniform(0, sends));
    dies = true;
  }
  EffectsOf driver(*this, daemon, now, sends_allowed);
  for (Effect& effect : out.mutable_effects()) {
    if (!result_.ok) return;
    dispatch(effect, driver);
  }
  if (!result_.ok) return;
  if (options_.check_engines) {
    if (auto status = engine.check_invariants_after_input(); !status) {
      fail("d" + std::to_string(daemon) + ": " + status.error().message);
    }
  }
  if (dies) kill(daemon, now);
}

void Simulation::service_nic(Vpid daemon, TimeNs now) {
  const NetworkModel& network = options_.network;
  // Bytes a daemon handed its kernel still leave after it dies, as in life.
  for (std::uint64_t token : net_.shared_nics[daemon].advance(now, network)) {
    auto found = net_.in_flight.find(token);
    InFlight flight = std::move(found->second);
    net_.in_flight.erase(found);
    TimeNs arrival = net_.links.arrival(daemon, flight.frame.to, now + flight.latency);
    schedule(arrival, std::move(flight.frame));
  }
  if (auto next = net_.shared_nics[daemon].next_event(network)) {
    schedule(*next, NicEvent{daemon, ++net_.nic_generation[daemon]});
  }
}

void Simulation::kill(Vpid victim, TimeNs now) {
  if (victim == kControllerVpid || !alive_[victim]) return;
  alive_[victim] = false;
  result_.killed.push_back(victim);
  trace([&] { return "d" + std::to_string(victim) + " killed"; });
  TimeNs delay = rng_.detect.uniform(options_.detect_min_ns, options_.detect_max_ns);
  schedule(now + delay, DetectEvent{victim});
}

void Simulation::check_liveness() {
  const Engine& controller = engines_[0];
  for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release}) {
    if (controller.open_ops(kind) != 0) {
      fail("hang: the controller still holds " + std::to_string(controller.open_ops(kind)) + " " +
           std::string(topology_name(kind)) + " broadcasts with nothing left to happen");
      return;
    }
  }
  bool participant_lost = false;
  for (Vpid daemon : participants_)
    participant_lost = participant_lost || !alive_[daemon];
  for (Vpid daemon = 0; daemon < options_.daemons; ++daemon) {
    if (!alive_[daemon]) continue;
    // Every contribution a living daemon made has ended, one way or another.
    if (engines_[daemon].open_fences() != 0) {
      fail("hang: daemon " + std::to_string(daemon) + " still has an open fence round " +
           std::to_string(engines_[daemon].fence_generation(signature_) + 1));
      return;
    }
    // With every participant alive, every round completes everywhere.
    if (!participant_lost && engines_[daemon].fence_generation(signature_) != options_.rounds) {
      fail("hang: daemon " + std::to_string(daemon) + " saw " +
           std::to_string(engines_[daemon].fence_generation(signature_)) + " of " +
           std::to_string(options_.rounds) + " fence rounds released");
      return;
    }
  }
  if (!participant_lost) {
    for (std::uint32_t round = 1; round <= options_.rounds; ++round) {
      std::size_t finished = checker_.fence_outcomes(FenceKey{signature_, round});
      if (finished != participants_.size()) {
        fail("hang: round " + std::to_string(round) + " finished at " + std::to_string(finished) +
             " of " + std::to_string(participants_.size()) + " participants");
        return;
      }
    }
    if (result_.rounds_failed != 0) fail("a round failed although no participant was lost");
  }
  for (std::uint32_t round = 1; round <= options_.rounds; ++round) {
    if (rounds_.end[round] != 0) ++result_.rounds_completed;
  }
  if (!pmix_) return;
  if (auto status = pmix_->finish(alive_); !status) fail(status.error().message);
  result_.pmix_released = pmix_->released();
  result_.pmix_failed = pmix_->failed();
}

}  // namespace

SimResult run_simulation(const SimOptions& options) {
  auto simulation = std::make_unique<Simulation>(options);
  SimResult result = simulation->run();
  if (!options.free_memory) {
    // Left to the process's exit: freeing a million engines block by block
    // took 9 s of a 70 s run. Held by a pointer, so it is not a leak (and a
    // later run frees the one kept before it).
    static Simulation* kept = nullptr;
    delete kept;
    kept = simulation.release();
  }
  return result;
}

}  // namespace grove
