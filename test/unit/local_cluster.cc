#include "local_cluster.h"

#include "grpcomm/effect_driver.h"
#include "grpcomm/join_seed.h"

namespace grove::test {

LocalCluster::LocalCluster(std::uint32_t daemons, EngineConfig base,
                           const std::function<void(EngineConfig&)>& adjust) {
  std::vector<Vpid> vpids(daemons);
  for (Vpid i = 0; i < daemons; ++i)
    vpids[i] = i;
  Membership membership = *Membership::create(vpids);
  for (Vpid i = 0; i < daemons; ++i) {
    EngineConfig config = base;
    config.self = i;
    config.tree_cache = nullptr;
    if (adjust) adjust(config);
    configs_.push_back(config);
    engines_.push_back(std::make_unique<Engine>(config, membership));
  }
  alive_.assign(daemons, true);
  effects_.resize(daemons);
}

namespace {

// Sends join the in-order queue; timers are armed; every other effect is
// recorded for the test to inspect.
class Recorder final : public EffectDriver {
 public:
  Recorder(Vpid vpid, std::vector<InFlight>& sent, std::deque<InFlight>& queue,
           std::map<std::pair<Vpid, TimerId>, TimeNs>& timers, std::vector<Effect>& effects)
      : vpid_(vpid), sent_(sent), queue_(queue), timers_(timers), effects_(effects) {}
  void send(SendFrame& send) override {
    auto header = decode_wire_frame(send.frame, UINT32_MAX);
    InFlight frame{vpid_, send.target, send.path, send.frame, *header};
    sent_.push_back(frame);
    queue_.push_back(std::move(frame));
  }
  void deliver(DeliverBroadcast& e) override { effects_.push_back(e); }
  void fence_done(FenceDone& e) override { effects_.push_back(e); }
  void broadcast_done(BroadcastDone& e) override { effects_.push_back(e); }
  void set_timer(SetTimer& e) override {
    timers_[{vpid_, e.id}] = e.deadline_ns;
    effects_.push_back(e);
  }
  void cancel_timer(CancelTimer& e) override {
    timers_.erase({vpid_, e.id});
    effects_.push_back(e);
  }
  void show_help(ShowHelpTopic& e) override { effects_.push_back(e); }
  void membership_changed(MembershipChanged& e) override { effects_.push_back(e); }

 private:
  Vpid vpid_;
  std::vector<InFlight>& sent_;
  std::deque<InFlight>& queue_;
  std::map<std::pair<Vpid, TimerId>, TimeNs>& timers_;
  std::vector<Effect>& effects_;
};

}  // namespace

void LocalCluster::record_flights(std::size_t budget_bytes) {
  recorders_.clear();
  for (Vpid vpid = 0; vpid < size(); ++vpid) {
    recorders_.emplace_back(budget_bytes);
    recorders_.back().start(configs_[vpid], size());
  }
}

Bytes LocalCluster::flight(Vpid vpid) const {
  return recorders_.at(vpid).write("test", engines_[vpid]->accounting(), engines_[vpid]->stats(),
                                   now_);
}

void LocalCluster::note(Vpid vpid, const FlightInputHead& input, const Outbox& out) {
  if (vpid < recorders_.size()) recorders_[vpid].record(input, out);
}

void LocalCluster::absorb(Vpid vpid, Outbox& out) {
  Recorder recorder(vpid, sent_, queue_, timers_, effects_[vpid]);
  dispatch_all(out, recorder);
}

void LocalCluster::contribute(Vpid vpid, const FenceRequest& request) {
  Outbox out;
  engines_[vpid]->contribute(now_, request, out);
  note(vpid,
       FlightInputHead{.kind = FlightInputKind::contribute,
                       .now = now_,
                       .number = request.placed_epoch,
                       .text = request.signature,
                       .participants = request.participants,
                       .data = request.data},
       out);
  absorb(vpid, out);
}

void LocalCluster::contribute_all(const std::string& signature, const Bytes& data_each) {
  VpidSet everyone = VpidSet::span(0, size() - 1);
  for (Vpid vpid = 0; vpid < size(); ++vpid) {
    if (alive_[vpid]) contribute(vpid, FenceRequest{signature, everyone, data_each});
  }
}

std::uint64_t LocalCluster::release(std::uint16_t tag, const Bytes& payload) {
  Outbox out;
  std::uint64_t id = engines_[0]->release_bcast(now_, tag, payload, out);
  note(0,
       FlightInputHead{.kind = FlightInputKind::release, .now = now_, .tag = tag, .data = payload},
       out);
  absorb(0, out);
  return id;
}

void LocalCluster::declare_departure(Vpid vpid) {
  Outbox out;
  engines_[0]->declare_departure(now_, vpid, out);
  note(0, FlightInputHead{.kind = FlightInputKind::departure, .now = now_, .peer = vpid}, out);
  absorb(0, out);
}

Vpid LocalCluster::bring_back(Vpid vpid) {
  Outbox out;
  if (!engines_[0]->declare_return(now_, vpid, out)) return vpid;
  note(0, FlightInputHead{.kind = FlightInputKind::return_, .now = now_, .peer = vpid}, out);
  EngineConfig config = configs_.back();
  config.self = vpid;
  auto engine = std::make_unique<Engine>(config, engines_[0]->join_seed());
  if (!recorders_.empty()) {
    if (vpid == size()) recorders_.emplace_back(recorders_.front());
    recorders_[vpid].start(config, 0, encode_join_seed(engines_[0]->join_seed()));
  }
  if (vpid == size()) {
    configs_.push_back(config);
    engines_.push_back(std::move(engine));
    alive_.push_back(true);
    effects_.emplace_back();
  } else {
    engines_[vpid] = std::move(engine);
    alive_[vpid] = true;
    effects_[vpid].clear();
    // Frames in flight to its predecessor, and its timers, went down with it.
    std::erase_if(queue_, [&](const InFlight& frame) { return frame.to == vpid; });
    std::erase_if(held_, [&](const InFlight& frame) { return frame.to == vpid; });
    std::erase_if(timers_, [&](const auto& timer) { return timer.first.first == vpid; });
  }
  absorb(0, out);
  return vpid;
}

void LocalCluster::run(const std::function<bool(const InFlight&)>& hold) {
  while (!queue_.empty()) {
    InFlight frame = std::move(queue_.front());
    queue_.pop_front();
    if (hold && hold(frame)) {
      held_.push_back(std::move(frame));
      continue;
    }
    if (!alive_[frame.to]) continue;
    now_ += 1'000;
    Outbox out;
    engines_[frame.to]->on_frame(now_, frame.from, frame.frame, out);
    note(frame.to,
         FlightInputHead{.kind = FlightInputKind::frame,
                         .now = now_,
                         .peer = frame.from,
                         .data = frame.frame.flatten()},
         out);
    absorb(frame.to, out);
  }
}

void LocalCluster::settle() {
  for (int pass = 0; pass < 16; ++pass) {
    run();
    fire_timers();
  }
  run();
}

void LocalCluster::fire_timers() {
  auto armed = std::move(timers_);
  timers_.clear();
  for (const auto& [key, deadline] : armed) {
    if (!alive_[key.first]) continue;
    now_ = std::max(now_, deadline);
    Outbox out;
    engines_[key.first]->on_timer(now_, key.second, out);
    note(key.first,
         FlightInputHead{.kind = FlightInputKind::timer,
                         .now = now_,
                         .timer_kind = static_cast<std::uint8_t>(key.second.kind),
                         .timer_topology = static_cast<std::uint8_t>(key.second.topology),
                         .number = key.second.op_id},
         out);
    absorb(key.first, out);
  }
}

std::vector<FenceDone> LocalCluster::fence_done(Vpid vpid) const {
  std::vector<FenceDone> out;
  for (const Effect& effect : effects_[vpid]) {
    if (const auto* done = std::get_if<FenceDone>(&effect)) out.push_back(*done);
  }
  return out;
}

std::vector<DeliverBroadcast> LocalCluster::delivered(Vpid vpid) const {
  std::vector<DeliverBroadcast> out;
  for (const Effect& effect : effects_[vpid]) {
    if (const auto* deliver = std::get_if<DeliverBroadcast>(&effect)) out.push_back(*deliver);
  }
  return out;
}

}  // namespace grove::test
