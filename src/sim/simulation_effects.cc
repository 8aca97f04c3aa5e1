// One daemon's step applied to the simulated world: its effects (frames onto
// the modelled network, deliveries and completions to the invariant checker,
// timers), and a planned fault that kills it mid-step.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "grpcomm/effect_driver.h"
#include "grpcomm/messages.h"
#include "grpcomm/tags.h"
#include "rml/tree_validate.h"
#include "sim/fault_schedule.h"
#include "sim/simulation.h"

namespace grove::sim_detail {

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
          token,
          InFlight{FrameEvent{send.target, daemon_, std::move(send.frame), sim_.life_[send.target]},
                   latency});
      sim_.service_nic(daemon_, now_);
      return;
    }
    TimeNs left = sim_.net_.nics[daemon_].transmit(now_, send.frame.size(), network);
    TimeNs arrival = sim_.net_.links.arrival(daemon_, send.target, left + latency);
    sim_.schedule(arrival,
                  FrameEvent{send.target, daemon_, std::move(send.frame), sim_.life_[send.target]});
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
                    ContributeEvent{daemon_, round + 1, sim_.life_[daemon_]});
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

// With Bruck fences there is no release: a victim "on release" dies as it
// sends a round of the exchange (a prefix of that step's frames leaves), and
// one "while holding" dies as it ends a round, so that the others' next run
// needs the rejoin of those that ended it.
bool Simulation::bruck_fault_fires(const FaultSpec& fault, const Effect& effect) const {
  if (fault.kind == FaultKind::on_release) {
    const auto* send = std::get_if<SendFrame>(&effect);
    if (!send) return false;
    auto header = decode_frame_header(send->frame.header, UINT32_MAX);
    return header && header->type == FrameType::fence_exchange && header->op_id >= fault.round;
  }
  if (fault.kind == FaultKind::while_holding) {
    const auto* done = std::get_if<FenceDone>(&effect);
    return done && done->key.generation >= fault.round;
  }
  return false;
}

bool Simulation::fault_fires(Vpid daemon, const Outbox& out) const {
  const bool bruck = options_.fence_topology == FenceTopology::bruck;
  for (std::size_t i = 0; i < faults_.planned.size(); ++i) {
    const FaultSpec& fault = faults_.planned[i];
    if (faults_.done[i] || fault.victim != daemon) continue;
    for (const Effect& effect : out.effects()) {
      if (bruck) {
        if (bruck_fault_fires(fault, effect)) return true;
        continue;
      }
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

}  // namespace grove::sim_detail
