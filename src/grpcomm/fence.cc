// Fences: every participant's contribution rolls up the routing tree to the
// controller, which releases the aggregate through the release seam. Keyed by
// (signature, generation). Contributions are kept by contributing daemon, so
// a re-send after a repair is idempotent. The release reaches every daemon,
// participant or not, so every daemon records every signature's round.
#include <algorithm>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"

namespace grove {

void Engine::contribute(TimeNs now, const FenceRequest& request, Outbox& out) {
  FenceKey key{request.signature, fence_generation(request.signature) + 1};
  FenceTracker& tracker = fences_[key];
  if (tracker.participants.empty()) {
    tracker.participants = request.participants;
    tracker.participants.insert(config_.self);  // a contributor participates, by definition
  }
  tracker.contributions[config_.self] = request.data;
  tracker.local = true;
  fence_progress(now, key, tracker, out);
}

void Engine::on_fence_rollup(TimeNs now, const FrameHeader& header, const Bytes& payload,
                             Outbox& out) {
  if (header.topology != TopologyKind::routing ||
      header.radix != radix_of(TopologyKind::routing, config_.radices)) {
    refuse_mismatch(header, out);
    return;
  }
  auto rollup = decode_fence_rollup(payload);
  if (!rollup) {
    ++stats_.malformed;
    return;
  }
  if (rollup->key.generation <= fence_generation(rollup->key.signature)) return;  // released
  FenceTracker& tracker = fences_[rollup->key];
  if (tracker.participants.empty()) tracker.participants = rollup->participants;
  for (auto& [vpid, data] : rollup->contributions) {
    tracker.contributions.try_emplace(vpid, std::move(data));
  }
  fence_progress(now, rollup->key, tracker, out);
}

void Engine::fence_progress(TimeNs now, const FenceKey& key, FenceTracker& tracker, Outbox& out) {
  if (is_controller()) {
    // A participant that died before its contribution arrived can never
    // contribute: end the round everywhere, naming it.
    std::optional<Vpid> lost;
    tracker.participants.for_each([&](Vpid participant) {
      if (!lost && tracker.contributions.count(participant) == 0 &&
          !membership_.is_alive(participant)) {
        lost = participant;
      }
    });
    if (lost) {
      FenceRelease release{key, FenceStatus::participant_lost, *lost, {}};
      release_bcast(now, tags::fence_release, encode(release), out);
      return;
    }
    if (tracker.contributions.size() < tracker.participants.size()) return;
    FenceRelease release{key, FenceStatus::ok, 0, {}};
    for (auto& [vpid, data] : tracker.contributions)
      release.contributions.emplace_back(vpid, data);
    release_bcast(now, tags::fence_release, encode(release), out);  // ends the tracker
    return;
  }
  const Tree& routing = topology(TopologyKind::routing).tree;
  if (tracker.subtree_version != membership_.tree_version()) {
    tracker.subtree_version = membership_.tree_version();
    tracker.subtree_participants.clear();
    for (Vpid member : routing.subtree(config_.self)) {
      if (tracker.participants.contains(member)) {
        tracker.subtree_participants.push_back(member);
      }
    }
  }
  for (Vpid participant : tracker.subtree_participants) {
    if (tracker.contributions.count(participant) == 0) return;  // still waiting below
  }
  const std::optional<Vpid> parent = topology(TopologyKind::routing).parent;
  if (!parent) return;
  std::vector<Vpid> keys;
  for (const auto& [vpid, data] : tracker.contributions)
    keys.push_back(vpid);
  if (tracker.sent_parent == parent && tracker.sent_keys == keys) return;
  if (tracker.sent_parent) ++stats_.rollup_resends;
  FenceRollup rollup{key, tracker.participants, {}};
  for (const auto& [vpid, data] : tracker.contributions)
    rollup.contributions.emplace_back(vpid, data);
  FrameHeader header = header_for(FrameType::fence_rollup, tags::fence_rollup,
                                  TopologyKind::routing, key.generation, *parent);
  send(*parent, SendPath::routed, header, share_bytes(encode(rollup)), out);
  tracker.sent_parent = parent;
  tracker.sent_keys = std::move(keys);
}

void Engine::end_fence(const FenceKey& key, FenceStatus status, Vpid lost, SharedBytes release,
                       Outbox& out) {
  // Recorded before looking for a tracker, deliberately: every daemon learns
  // every signature's round, participant or not.
  std::uint64_t& generation = fence_generations_[key.signature];
  generation = std::max(generation, key.generation);
  for (auto tracker = fences_.lower_bound(FenceKey{key.signature, 0});
       tracker != fences_.end() && tracker->first.signature == key.signature &&
       tracker->first.generation <= key.generation;) {
    if (tracker->first == key && tracker->second.local) {
      out.push(FenceDone{key, status, lost, status == FenceStatus::ok ? release : nullptr});
    }
    tracker = fences_.erase(tracker);
  }
}

void Engine::repair_fences(TimeNs now, Outbox& out) {
  std::vector<FenceKey> keys;
  for (const auto& [key, tracker] : fences_)
    keys.push_back(key);
  for (const FenceKey& key : keys) {
    auto found = fences_.find(key);
    if (found != fences_.end()) fence_progress(now, key, found->second, out);
  }
}

}  // namespace grove
