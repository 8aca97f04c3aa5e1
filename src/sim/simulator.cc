// The simulator's event loop: the world is built from the options, events
// are handled in virtual-time order, and the run ends in a result.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "grpcomm/effect_driver.h"
#include "grpcomm/messages.h"
#include "grpcomm/tags.h"
#include "rml/tree_validate.h"
#include "sim/fault_schedule.h"
#include "sim/simulation.h"

namespace grove {
namespace sim_detail {

std::string format_time(TimeNs ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3fus", static_cast<double>(ns) / 1000.0);
  return text;
}

Simulation::Simulation(const SimOptions& options)
    : options_(options),
      rng_{RandomStream::split(options.seed, "participants"),
           RandomStream::split(options.seed, "contribute"),
           RandomStream::split(options.seed, "payloads"),
           RandomStream::split(options.seed, "jitter"),
           RandomStream::split(options.seed, "faults"),
           RandomStream::split(options.seed, "detect"),
           RandomStream::split(options.seed, "elastic")},
      checker_(options.daemons) {
  std::vector<Vpid> daemons(options.daemons);
  for (Vpid i = 0; i < options.daemons; ++i)
    daemons[i] = i;
  Membership membership = *Membership::create(daemons);
  EngineConfig& config = config_;
  config.radices = options.radices;
  config.low_radix_release = options.low_radix_release;
  config.fence_topology = options.fence_topology;
  config.compress_threshold = options.compress_threshold;
  config.release_delay_ns = options.release_delay_ns;
  config.ack_delay_ns = options.ack_delay_ns;
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
  // Joins append: no reallocation mid-run.
  engines_.reserve(std::size_t{options.daemons} + options.joins);
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
  life_.assign(options.daemons, 0);
  net_.nic_generation.assign(options.daemons, 0);
  participants_.by_vpid.assign(options.daemons, false);
  // Daemon i > 0 hosts participants with probability participant_fraction:
  // its draw's top 53 bits, as a fraction of 2^53, fall below it (exact in
  // doubles, so the same everywhere).
  const double hosts_below = options.participant_fraction * 0x1p53;
  for (Vpid i = 0; i < options.daemons; ++i) {
    participants_.by_vpid[i] =
        i == 0 || static_cast<double>(rng_.participants.next() >> 11) < hosts_below;
    if (participants_.by_vpid[i]) participants_.list.push_back(i);
  }
  participants_.set = VpidSet::from_list(participants_.list);
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
    config_.release_delay_target = faults_.planned.front().victim;
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
  std::size_t share = options_.payload_bytes / std::max<std::size_t>(1, participants_.list.size());
  Bytes data(share);
  // Eight bytes per draw, least significant first.
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < share; ++i) {
    if (i % 8 == 0) bits = rng_.payloads.next();
    data[i] = static_cast<std::byte>(bits & 0xFF);
    bits >>= 8;
  }
  // The job was placed at the start: a daemon that came back hosts none of it.
  return FenceRequest{signature_, participants_.set, std::move(data), 0};
}

SimResult Simulation::run() {
  plan_faults();
  plan_elastic();
  for (Vpid daemon : participants_.list)
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
    if (!alive_[frame->to] || life_[frame->to] != frame->life) return;
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
    on_detected(detect->victim);
  } else if (const auto* back = std::get_if<ReturnEvent>(&event)) {
    bring_back(back->vpid);
  } else if (std::holds_alternative<JoinEvent>(event)) {
    join();
  } else if (const auto* nic = std::get_if<NicEvent>(&event)) {
    if (nic->generation == net_.nic_generation[nic->daemon]) service_nic(nic->daemon, now_);
    return;
  } else if (const auto* contribute = std::get_if<ContributeEvent>(&event)) {
    Vpid daemon = contribute->daemon;
    if (!alive_[daemon] || life_[daemon] != contribute->life) return;
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

}  // namespace sim_detail

using sim_detail::Simulation;

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
