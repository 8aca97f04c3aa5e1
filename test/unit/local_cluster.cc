#include "local_cluster.h"

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
    engines_.push_back(std::make_unique<Engine>(config, membership));
  }
  alive_.assign(daemons, true);
  effects_.resize(daemons);
}

void LocalCluster::absorb(Vpid vpid, Outbox& out) {
  for (Effect& effect : out.mutable_effects()) {
    if (auto* send = std::get_if<SendFrame>(&effect)) {
      auto header = decode_wire_frame(send->frame, UINT32_MAX);
      InFlight frame{vpid, send->target, send->path, send->frame, *header};
      sent_.push_back(frame);
      queue_.push_back(std::move(frame));
      continue;
    }
    if (auto* timer = std::get_if<SetTimer>(&effect))
      timers_[{vpid, timer->id}] = timer->deadline_ns;
    if (auto* cancel = std::get_if<CancelTimer>(&effect)) timers_.erase({vpid, cancel->id});
    effects_[vpid].push_back(std::move(effect));
  }
  out.clear();
}

void LocalCluster::contribute(Vpid vpid, const FenceRequest& request) {
  Outbox out;
  engines_[vpid]->contribute(now_, request, out);
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
  absorb(0, out);
  return id;
}

void LocalCluster::declare_departure(Vpid vpid) {
  Outbox out;
  engines_[0]->declare_departure(now_, vpid, out);
  absorb(0, out);
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
    absorb(frame.to, out);
  }
}

void LocalCluster::fire_timers() {
  auto armed = std::move(timers_);
  timers_.clear();
  for (const auto& [key, deadline] : armed) {
    if (!alive_[key.first]) continue;
    now_ = std::max(now_, deadline);
    Outbox out;
    engines_[key.first]->on_timer(now_, key.second, out);
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
