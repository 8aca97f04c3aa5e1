#include "sim/invariant_checker.h"

#include <string>

#include "grpcomm/tags.h"

namespace grove {

bool same_bytes(const SharedBytes& a, const SharedBytes& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return *a == *b;
}

namespace {

std::string op_name(TopologyKind kind, std::uint64_t id) {
  return std::string(topology_name(kind)) + " op " + std::to_string(id);
}

}  // namespace

Status InvariantChecker::on_deliver(Vpid daemon, const DeliverBroadcast& deliver) {
  auto key = std::make_pair(deliver.topology, deliver.op_id);
  auto& entry = deliveries_[key];
  if (entry.delivered.empty()) entry.bytes = deliver.payload;
  if (entry.delivered.size() < daemons_) entry.delivered.resize(daemons_, false);
  if (entry.delivered[daemon]) {
    return Error{"daemon " + std::to_string(daemon) + " delivered " +
                 op_name(deliver.topology, deliver.op_id) + " twice"};
  }
  entry.delivered[daemon] = true;
  if (!same_bytes(entry.bytes, deliver.payload)) {
    return Error{"daemon " + std::to_string(daemon) + " delivered different bytes for " +
                 op_name(deliver.topology, deliver.op_id)};
  }
  return ok_status();
}

Status InvariantChecker::on_broadcast_done(const BroadcastDone& done,
                                           const std::vector<bool>& alive) {
  auto key = std::make_pair(done.topology, done.op_id);
  if (!finished_ops_.insert(key).second) {
    return Error{op_name(done.topology, done.op_id) + " completed twice (or after its abort)"};
  }
  if (!done.ok || done.tag == tags::membership || done.tag == tags::op_abort) {
    return ok_status();  // internal tags are not delivered as broadcasts
  }
  auto found = deliveries_.find(key);
  for (std::size_t vpid = 0; vpid < alive.size(); ++vpid) {
    if (!alive[vpid]) continue;
    if (found == deliveries_.end() || vpid >= found->second.delivered.size() ||
        !found->second.delivered[vpid]) {
      return Error{"the originator completed " + op_name(done.topology, done.op_id) +
                   " before living daemon " + std::to_string(vpid) + " had it"};
    }
  }
  return ok_status();
}

Status InvariantChecker::on_fence_done(Vpid daemon, const FenceDone& done) {
  auto [where, inserted] = fences_.try_emplace(done.key);
  FenceOutcome& outcome = where->second;
  if (outcome.reset) {
    outcome.reset = false;
    outcome.status = done.status;
    outcome.lost = done.lost;
    outcome.release = done.release;
  }
  if (inserted) {
    outcome.status = done.status;
    outcome.lost = done.lost;
    outcome.release = done.release;
    outcome.finished.assign(daemons_, false);
  }
  auto name = [&] {
    return "fence '" + done.key.signature + "' round " + std::to_string(done.key.generation);
  };
  if (daemon >= daemons_) {
    return Error{"daemon " + std::to_string(daemon) + " is not in the simulation"};
  }
  if (outcome.finished.size() < daemons_) outcome.finished.resize(daemons_, false);
  if (outcome.finished[daemon]) {
    return Error{"daemon " + std::to_string(daemon) + " finished " + name() + " twice"};
  }
  outcome.finished[daemon] = true;
  ++outcome.finished_count;
  if (outcome.status != done.status || outcome.lost != done.lost) {
    return Error{"daemon " + std::to_string(daemon) + " ended " + name() + " as " +
                 std::string(fence_status_name(done.status)) + ", another as " +
                 std::string(fence_status_name(outcome.status))};
  }
  if (!same_bytes(outcome.release, done.release)) {
    return Error{"daemon " + std::to_string(daemon) + " got different data from " + name()};
  }
  return ok_status();
}

void InvariantChecker::renew(Vpid vpid) {
  if (vpid >= daemons_) {
    daemons_ = std::size_t{vpid} + 1;
    return;  // a joiner: nothing delivered yet
  }
  for (auto& [key, entry] : deliveries_) {
    if (vpid < entry.delivered.size()) entry.delivered[vpid] = false;
  }
}

void InvariantChecker::forget_fence_endings(Vpid vpid) {
  for (auto& [key, outcome] : fences_) {
    if (vpid >= outcome.finished.size() || !outcome.finished[vpid]) continue;
    outcome.finished[vpid] = false;
    // Every finisher ended it the same way, so the outcome stands while one
    // is left; with none, the next to finish sets it.
    if (--outcome.finished_count == 0) {
      outcome.status = FenceStatus::ok;
      outcome.lost = 0;
      outcome.release = nullptr;
      outcome.reset = true;
    }
  }
}

std::size_t InvariantChecker::fence_outcomes(const FenceKey& key) const {
  auto found = fences_.find(key);
  return found == fences_.end() ? 0 : found->second.finished_count;
}

}  // namespace grove
