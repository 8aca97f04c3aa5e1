// Fences: every participant's contribution rolls up the routing tree to the
// controller, which releases the aggregate through the release seam. Keyed by
// (signature, generation). Contributions are kept by contributing daemon, so
// a re-send after a repair is idempotent. The release reaches every daemon,
// participant or not, so every daemon records every signature's round.
#include <algorithm>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"

namespace grove {

void Engine::contribute(TimeNs now, FenceRequest request, Outbox& out) {
  flush_old_acks(now, out);
  if (config_.fence_topology == FenceTopology::bruck) {
    bruck_contribute(now, std::move(request), out);
    return;
  }
  FenceKey key = fences_.next_round(request.signature);
  FenceTracker* open = fences_.open(key);
  if (!open) return;  // its scope has ended: the job is gone
  FenceTracker& tracker = *open;
  if (tracker.participants.empty()) {
    tracker.participants = request.participants;
    tracker.participants.insert(config_.self);  // a contributor participates, by definition
    tracker.placed_epoch = request.placed_epoch;
  }
  tracker.contributions[config_.self] = std::move(request.data);
  tracker.local = true;
  fence_progress(now, key, tracker, out);
}

void Engine::on_fence_rollup(TimeNs now, const FrameHeader& header, const Bytes& payload,
                             Outbox& out) {
  if (config_.fence_topology != FenceTopology::tree) {
    refuse_fence_shape(header, out);
    return;
  }
  if (header.topology != TopologyKind::routing ||
      header.radix != radix_of(TopologyKind::routing, config_.radices)) {
    refuse_mismatch(header, out);
    return;
  }
  auto rollup = wire_decode<FenceRollup>(payload);
  if (!rollup) {
    ++stats_.malformed;
    return;
  }
  FenceTracker* open = fences_.open(rollup->key);
  if (!open) return;  // released already, or its scope ended: a straggler
  FenceTracker& tracker = *open;
  if (tracker.participants.empty()) {
    tracker.participants = rollup->participants;
    tracker.placed_epoch = rollup->placed_epoch;
  }
  tracker.too_large = tracker.too_large || rollup->too_large;
  for (auto& [vpid, data] : rollup->contributions) {
    tracker.contributions.try_emplace(vpid, std::move(data));
  }
  fence_progress(now, rollup->key, tracker, out);
}

void Engine::fence_progress(TimeNs now, const FenceKey& key, FenceTracker& tracker, Outbox& out) {
  if (is_controller()) {
    // A participant that died before its contribution arrived can never
    // contribute: end the round everywhere, naming it.
    const std::optional<Vpid> lost = lost_participant(tracker);
    if (lost) {
      FenceRelease release{key, FenceStatus::participant_lost, *lost, {}};
      release_bcast(now, tags::fence_release, encode(release), out);
      return;
    }
    if (!tracker.too_large && tracker.contributions.size() < tracker.participants.size()) return;
    FenceRelease release{key, FenceStatus::ok, 0, {}};
    if (!tracker.too_large) {
      for (auto& [vpid, data] : tracker.contributions)
        release.contributions.emplace_back(vpid, data);
    }
    Bytes payload = encode(release);
    // A release no daemon would take (over the frame limit) would never end
    // the round: it ends with the error instead, everywhere.
    if (tracker.too_large || payload.size() > config_.max_payload) {
      payload = encode(FenceRelease{key, FenceStatus::too_large, 0, {}});
    }
    // Its acks may wait (ack_batch.cc) unless someone waits for its end.
    const std::uint16_t flags =
        config_.ack_delay_ns > 0 && key.signature != config_.prompt_ack_signature
            ? kFrameAcksMayWait
            : 0;
    release_bcast(now, tags::fence_release, payload, out, flags);  // ends the tracker
    return;
  }
  const std::optional<Vpid> parent = topology(TopologyKind::routing).parent;
  if (tracker.too_large) {
    if (parent && !(tracker.sent_parent == parent && tracker.sent_too_large))
      send_rollup(key, tracker, *parent, out);
    return;
  }
  const Tree& routing = topology(TopologyKind::routing).tree;
  if (tracker.subtree_version != membership_.tree_version()) {
    tracker.subtree_version = membership_.tree_version();
    tracker.subtree_participants.clear();
    tracker.subtree_heard = 0;
    // A participant daemon that came back or joined after the participants
    // were placed hosts none of them: nobody waits for it (the controller
    // ends the round naming it).
    const bool renewed_any = !membership_.incarnations().empty();
    const auto count_in = [&](Vpid member) {
      if (!tracker.participants.contains(member)) return;
      if (renewed_any && membership_.incarnation(member) > tracker.placed_epoch) return;
      tracker.subtree_participants.push_back(member);
    };
    if (topology(TopologyKind::routing).children.empty()) {
      count_in(config_.self);  // a leaf (most daemons): its subtree is itself
    } else {
      for (Vpid member : routing.subtree(config_.self))
        count_in(member);
    }
  }
  // A cursor, not a scan: a daemon hears from each child, and rescanning its
  // whole subtree per frame made the rollup cost radix x subtree per daemon.
  while (tracker.subtree_heard < tracker.subtree_participants.size()) {
    const Vpid next = tracker.subtree_participants[tracker.subtree_heard];
    if (tracker.contributions.count(next) == 0) return;  // still waiting below
    ++tracker.subtree_heard;
  }
  if (!parent) return;
  // Contributions are only ever added, so the same count means the same set.
  if (tracker.sent_parent == parent && tracker.sent_count == tracker.contributions.size()) return;
  if (tracker.sent_parent) ++stats_.rollup_resends;
  send_rollup(key, tracker, *parent, out);
}

void Engine::send_rollup(const FenceKey& key, FenceTracker& tracker, Vpid parent, Outbox& out) {
  FenceRollup rollup{key, tracker.participants, tracker.placed_epoch, {}, tracker.too_large};
  if (!tracker.too_large) {
    for (const auto& [vpid, data] : tracker.contributions)
      rollup.contributions.emplace_back(vpid, data);
  }
  Bytes payload = encode(rollup);
  // Over the frame limit the parent would refuse it and the round would
  // wait for ever: the round fails, and the parent is told so at once.
  if (!tracker.too_large && payload.size() > config_.max_payload) {
    tracker.too_large = true;
    rollup.contributions.clear();
    rollup.too_large = true;
    payload = encode(rollup);
  }
  FrameHeader header = header_for(FrameType::fence_rollup, tags::fence_rollup,
                                  TopologyKind::routing, key.generation, parent);
  send(parent, SendPath::routed, header, share_bytes(std::move(payload)), out);
  tracker.sent_parent = parent;
  tracker.sent_count = tracker.contributions.size();
  tracker.sent_too_large = tracker.too_large;
}

std::optional<Vpid> Engine::lost_participant(const FenceTracker& tracker) const {
  auto missing = [&](Vpid vpid) { return tracker.contributions.count(vpid) == 0; };
  // A daemon that came back or joined after the participants were placed is
  // a new process: whatever it hosted of them died with its predecessor.
  std::optional<Vpid> renewed;
  for (const Incarnation& entry : membership_.incarnations()) {  // ascending
    if (entry.epoch > tracker.placed_epoch && tracker.participants.contains(entry.vpid) &&
        missing(entry.vpid)) {
      renewed = entry.vpid;
      break;
    }
  }
  std::optional<Vpid> lost = dead_participant(tracker);
  if (renewed && (!lost || *renewed < *lost)) return renewed;
  return lost;
}

std::optional<Vpid> Engine::dead_participant(const FenceTracker& tracker) const {
  auto missing = [&](Vpid vpid) { return tracker.contributions.count(vpid) == 0; };
  std::optional<Vpid> lost;
  if (!membership_.dense()) {
    tracker.participants.for_each([&](Vpid participant) {
      if (!lost && missing(participant) && !membership_.is_alive(participant)) lost = participant;
    });
    return lost;
  }
  // With a dense daemon set the dead are the failed set plus any vpid past
  // its end: look there instead of at every participant (this runs on every
  // rollup the controller receives).
  const auto size = static_cast<std::uint64_t>(membership_.size());
  for (const VpidRange& range : tracker.participants.ranges()) {
    for (std::uint64_t vpid = std::max<std::uint64_t>(range.first, size); vpid <= range.last;
         ++vpid) {
      if (missing(static_cast<Vpid>(vpid))) {
        lost = static_cast<Vpid>(vpid);
        break;
      }
    }
    if (lost) break;
  }
  for (Vpid vpid : membership_.failed()) {  // ascending
    if (lost && vpid > *lost) break;
    if (tracker.participants.contains(vpid) && missing(vpid)) {
      lost = vpid;
      break;
    }
  }
  return lost;
}

void Engine::release_delivered(const SharedBytes& release, Outbox& out) {
  auto header = decode_fence_release_header(*release);
  if (!header) {
    ++stats_.malformed;
    return;
  }
  end_fence(header->key, header->status, header->lost, release, out);
}

void Engine::end_fence(const FenceKey& key, FenceStatus status, Vpid lost, SharedBytes release,
                       Outbox& out) {
  if (fences_.release(key)) {
    out.push(FenceDone{key, status, lost, status == FenceStatus::ok ? release : nullptr});
  }
}

void Engine::repair_fences(TimeNs now, bool returned, Outbox& out) {
  for (const FenceKey& key : fences_.open_keys()) {
    FenceTracker* tracker = fences_.find(key);
    if (!tracker) continue;
    // The parent may be a returner, which holds none of what was sent to
    // its predecessor: the rollup goes again.
    if (returned && tracker->sent_parent &&
        std::binary_search(renewed_.begin(), renewed_.end(), *tracker->sent_parent)) {
      tracker->sent_parent.reset();  // whatever was sent, a too-large flag included
      ++stats_.rollup_resends;
    }
    fence_progress(now, key, *tracker, out);
  }
}

}  // namespace grove
