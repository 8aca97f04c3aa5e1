// Reliable broadcast over one topology. The originator (the controller) and
// every relay hold the payload until the op is known complete everywhere (the
// watermark passes it); acks roll up the same topology; a repair makes every
// holder forward to children it has not reached; receipt is idempotent.
#include <algorithm>
#include <cassert>

#include "grpcomm/engine.h"
#include "grpcomm/repair_rules.h"
#include "grpcomm/tags.h"

namespace grove {

bool Engine::should_hold(std::uint16_t tag) const {
  if (config_.release_delay_ns == 0 || !is_release_tag(tag)) return false;
  return config_.release_delay_target < 0 ||
         static_cast<std::uint64_t>(config_.release_delay_target) == config_.self;
}

std::uint64_t Engine::release_bcast(TimeNs now, std::uint16_t tag,
                                    std::span<const std::byte> payload, Outbox& out,
                                    std::uint16_t flags) {
  assert(is_controller());
  const TopologyKind kind = topology_for_tag(tag, config_.low_radix_release);
  if (tag == tags::fence_release && config_.low_radix_release &&
      config_.radices.release == config_.radices.routing && !radix_noop_shown_) {
    radix_noop_shown_ = true;
    out.push(ShowHelpTopic{
        "help-grpcomm.txt",
        "release-radix-noop",
        {std::to_string(config_.radices.routing), std::to_string(config_.radices.release)}});
  }
  TopologyState& state = topology(kind);
  const std::uint64_t id = state.next_id++;
  XcastOp& op = state.ops[id];
  if (config_.track_touched_ops) touched_.emplace_back(kind, id);
  op.tag = tag;
  op.started_ns = now;
  // Deflated once, here; relays forward these bytes untouched. A payload that
  // barely shrinks (already compressed, or random) travels as it is: every
  // receiver would pay the inflate for a saving of less than an eighth.
  op.wire = share_bytes(payload);
  op.flags = flags;
  if (payload.size() > config_.compress_threshold && worth_deflating(payload)) {
    Bytes deflated = compress_payload(payload);
    if (!deflated.empty() && deflated.size() <= payload.size() / 8 * 7) {
      op.wire = share_bytes(std::move(deflated));
      op.flags |= kFrameCompressed;
    }
  }
  deliver(kind, id, op, out);
  // Delivery may have ended this very op (an abort addressed to it cannot, but be safe).
  auto found = state.ops.find(id);
  if (found == state.ops.end()) return id;
  if (should_hold(tag)) {
    found->second.phase = OpPhase::held;
    out.push(SetTimer{TimerId{TimerKind::release_hold, kind, id}, now + config_.release_delay_ns});
    return id;
  }
  advance(now, state, id, found->second, out);
  return id;
}

void Engine::deliver(TopologyKind kind, std::uint64_t op_id, const XcastOp& op, Outbox& out) {
  SharedBytes plain = op.wire;
  if (op.flags & kFrameCompressed) {
    auto inflated = inflate_payload(config_.inflate_cache.get(), op.wire, config_.max_payload);
    if (!inflated) {
      ++stats_.malformed;
      return;
    }
    plain = std::move(*inflated);
  }
  on_delivered(DeliverBroadcast{op.tag, kind, op_id, std::move(plain)}, out);
}

// The join between the broadcast half and the rest: one delivery, routed by
// its tag (grpcomm/tags.h) to the driver and to what it ends here.
void Engine::on_delivered(const DeliverBroadcast& delivery, Outbox& out) {
  const DeliveryRoute route = delivery_route(delivery.tag);
  if (route.to_driver) out.push(delivery);
  switch (route.ends) {
    case DeliveryEnds::fence:
      release_delivered(delivery.payload, out);
      return;
    case DeliveryEnds::op:
      abort_delivered(*delivery.payload, out);
      return;
    case DeliveryEnds::nothing:
      return;
  }
}

void Engine::abort_delivered(const Bytes& payload, Outbox& out) {
  auto abort = wire_decode<OpAbort>(payload);
  if (!abort) {
    ++stats_.malformed;
    return;
  }
  apply_op_abort(*abort, out);
}

void Engine::on_xcast_data(TimeNs now, const FrameHeader& header, const SharedBytes& payload,
                           Outbox& out) {
  if (!topology_matches(header)) {
    refuse_mismatch(header, out);
    return;
  }
  if (is_controller()) {
    // The originator of every broadcast is the root of every tree: nobody
    // sends it data, and an op it never issued must not enter its books.
    ++stats_.malformed;
    return;
  }
  TopologyState& state = topology(header.topology);
  learn_watermark(state, header.watermark, out);
  // A notice is applied on receipt, whoever sent it: it is the news that
  // explains why an unexpected sender is now this daemon's parent.
  const bool view_changed = header.tag == tags::membership && adopt_notice(*payload, out);

  const std::uint64_t id = header.op_id;
  if (id < state.watermark || state.aborted.count(id) != 0) {
    // Complete (or ended) everywhere already: answering costs nothing.
    send(header.sender, SendPath::direct,
         header_for(FrameType::xcast_ack, header.tag, header.topology, id, header.sender),
         state.ack, out);
  } else if (rule_on(RepairRule::accept_any_sender) || state.parent == header.sender) {
    auto [where, inserted] = state.ops.try_emplace(id);
    if (config_.track_touched_ops) touched_.emplace_back(header.topology, id);
    if (inserted) {
      where->second.tag = header.tag;
      where->second.flags = header.flags;
      where->second.wire = payload;
    } else {
      ++stats_.duplicates;
    }
    // Ack whoever asked, every time they ask (no sender screen).
    where->second.requesters.insert(header.sender);
    where->second.answered.erase(header.sender);
    if (inserted) {
      deliver(header.topology, id, where->second, out);
      // Delivery can erase ops (an abort), which moves the rest: look again.
      where = state.ops.find(id);
    }
    if (where == state.ops.end()) {
      if (view_changed) repair_all(now, out);
      return;
    }
    XcastOp& op = where->second;
    if (rule_on(RepairRule::park_when_behind) &&
        must_park(header.tree_version, membership_.tree_version(), header.sender, state.parent)) {
      // The sender has seen a repair this daemon has not. Deriving children
      // now would read an old tree; wait for the notice.
      op.parked_until = std::max(op.parked_until.value_or(0), header.tree_version);
      ++stats_.parked;
    } else if (inserted && should_hold(header.tag)) {
      op.phase = OpPhase::held;
      out.push(SetTimer{TimerId{TimerKind::release_hold, header.topology, id},
                        now + config_.release_delay_ns});
    } else {
      advance(now, state, id, op, out);
    }
  }
  if (view_changed) repair_all(now, out);
}

void Engine::on_xcast_ack(TimeNs now, const FrameHeader& header, const Bytes& payload,
                          Outbox& out) {
  TopologyState& state = topology(header.topology);
  learn_watermark(state, header.watermark, out);
  // One op's ack is an XcastAck; several share a frame as an XcastAckBatch.
  if (auto ack = wire_decode<XcastAck>(payload)) {
    take_ack(now, state, header, header.op_id, ack->slot, out);
    return;
  }
  auto batch = wire_decode<XcastAckBatch>(payload);
  if (!batch) {
    ++stats_.malformed;
    return;
  }
  take_ack(now, state, header, header.op_id, batch->slot, out);
  for (std::uint64_t op_id : batch->more)
    take_ack(now, state, header, op_id, batch->slot, out);
}

void Engine::take_ack(TimeNs now, TopologyState& state, const FrameHeader& header,
                      std::uint64_t op_id, std::uint32_t slot, Outbox& out) {
  auto found = state.ops.find(op_id);
  if (found == state.ops.end()) return;  // answered after we finished: harmless
  AckStamp& stamp = found->second.acked[header.sender];
  if (header.epoch >= stamp.epoch) stamp = AckStamp{header.epoch, slot};
  advance(now, state, op_id, found->second, out);
}

void Engine::on_timer(TimeNs now, TimerId id, Outbox& out) {
  if (id.kind == TimerKind::ack_flush) {
    ack_timer_armed_ = false;
    flush_acks(out);
    return;
  }
  if (id.topology == TopologyKind::bruck) return;  // no tree, no timers
  TopologyState& state = topology(id.topology);
  auto found = state.ops.find(id.op_id);
  if (found == state.ops.end() || found->second.phase != OpPhase::held) return;
  found->second.phase = OpPhase::received;
  advance(now, state, id.op_id, found->second, out);
}

void Engine::advance(TimeNs now, TopologyState& state, std::uint64_t op_id, XcastOp& op,
                     Outbox& out) {
  if (config_.track_touched_ops) touched_.emplace_back(state.kind, op_id);
  if (op.parked_until || op.phase == OpPhase::held) return;
  const std::vector<Vpid>& children = state.children;
  const bool first_pass = !op.forwarded();
  if (first_pass) {
    // One allocation each, not one per doubling up to the radix.
    op.sent_to.reserve(children.size());
    op.acked.reserve(children.size());
  }
  if (op.sent_all_version != membership_.tree_version()) {
    visit_forward_targets(children, op.sent_to, [&](Vpid child) {
      op.sent_to[child] = *state.slot_of_child(child);
      if (!first_pass) ++stats_.replays;
      FrameHeader header = header_for(FrameType::xcast_data, op.tag, state.kind, op_id, child);
      header.flags = op.flags;
      header.origin = kControllerVpid;
      SendPath path = state.kind == TopologyKind::release ? SendPath::direct : SendPath::routed;
      send(child, path, header, op.wire, out);
    });
    op.sent_all_version = membership_.tree_version();
  }
  // Every child needs an ack of its own: with fewer acks held than children
  // some child is still pending, and the per-child check can wait for the last.
  bool pending = op.acked.size() < children.size();
  const std::uint64_t return_epoch =
      rule_on(RepairRule::void_acks_on_return) ? membership_.return_epoch() : 0;
  for (std::size_t i = 0; i < children.size() && !pending; ++i) {
    auto ack = op.acked.find(children[i]);
    pending = ack == op.acked.end() ||
              (rule_on(RepairRule::ack_names_subtree) &&
               !ack_vouches(ack->second, membership_.epoch(), return_epoch, state.child_slots[i]));
  }
  if (pending) {
    op.phase = OpPhase::forwarding;
    return;
  }
  op.phase = OpPhase::complete;
  if (is_controller()) {
    finish_at_origin(now, state, op_id, op, /*ok=*/true, out);
    return;
  }
  const auto& routing_parent = topology(TopologyKind::routing).parent;
  visit_ack_targets(op.requesters, op.answered, [&](Vpid requester) {
    op.answered.insert(requester);
    SendPath path = state.kind == TopologyKind::routing && routing_parent == requester
                        ? SendPath::routed
                        : SendPath::direct;
    send_ack(now, state, op_id, op.tag, op.flags, requester, path, out);
  });
}

void Engine::finish_at_origin(TimeNs now, TopologyState& state, std::uint64_t op_id, XcastOp& op,
                              bool ok, Outbox& out) {
  BroadcastDone done{op.tag, state.kind, op_id, op.wire->size(), op.started_ns, now, ok, op.flags};
  if (op.phase == OpPhase::held)
    out.push(CancelTimer{TimerId{TimerKind::release_hold, state.kind, op_id}});
  out.push(done);
  state.ops.erase(op_id);
  state.watermark = state.ops.empty() ? state.next_id : state.ops.begin()->first;
}

std::optional<Engine::OpenBroadcast> Engine::oldest_open_broadcast() const {
  if (!is_controller()) return std::nullopt;
  std::optional<OpenBroadcast> oldest;
  for (const TopologyState& state : topologies_) {
    // At the origin an op is erased once complete: every op held is open,
    // and ids (a flat map's order) follow the order they started in.
    if (state.ops.empty()) continue;
    const auto& [id, op] = *state.ops.begin();
    if (!oldest || op.started_ns < oldest->started_ns)
      oldest = OpenBroadcast{state.kind, id, op.tag, op.started_ns};
  }
  return oldest;
}

void Engine::learn_watermark(TopologyState& state, std::uint64_t watermark, Outbox& out) {
  if (is_controller() || watermark <= state.watermark) return;
  state.watermark = watermark;
  for (const auto& [id, op] : state.ops) {
    if (id >= watermark) break;
    if (op.phase == OpPhase::held) {
      out.push(CancelTimer{TimerId{TimerKind::release_hold, state.kind, id}});
    }
  }
  erase_if(state.ops, [&](const auto& entry) { return entry.first < watermark; });
  state.aborted.erase(state.aborted.begin(), state.aborted.lower_bound(watermark));
}

void Engine::repair_ops(TimeNs now, TopologyState& state, bool returned, Outbox& out) {
  // Ids first: advance() may end an op (the originator's last ack).
  std::vector<std::uint64_t>& ids = repair_ids_;
  ids.clear();
  for (const auto& [id, op] : state.ops)
    ids.push_back(id);
  for (std::uint64_t id : ids) {
    auto found = state.ops.find(id);
    if (found == state.ops.end()) continue;
    XcastOp& op = found->second;
    if (op.parked_until && membership_.tree_version() >= *op.parked_until) {
      op.parked_until.reset();
    }
    // Our own acks were made from the slot we held; from a new one they vouch
    // for another subtree, so every requester is answered again. After a
    // return no ack made before it vouches (rule 7): ours are made again too.
    if (state.own_slot_moved || returned) op.answered.clear();
    // A child may be a returner: a new process at an old vpid (and slot)
    // that holds none of what its predecessor was sent. It is sent again.
    if (returned) {
      erase_if(op.sent_to, [&](const auto& entry) {
        return std::binary_search(renewed_.begin(), renewed_.end(), entry.first);
      });
    }
    if (op.parked_until || op.phase == OpPhase::held) continue;
    // Same place, same children: a complete op whose every requester has
    // been answered has nothing to do. (An incomplete one may now count an ack
    // that came from this epoch early; an op just unparked owes its sender.)
    const bool settled =
        op.phase == OpPhase::complete && op.answered.size() == op.requesters.size();
    if (settled && !state.own_slot_moved && !state.children_moved && !returned) continue;
    // A child that died, or moved to another slot since we sent to it, gets
    // the payload (again) in its current place.
    erase_if(op.sent_to,
             [&](const auto& entry) { return state.slot_of_child(entry.first) != entry.second; });
    op.sent_all_version = UINT64_MAX;
    // Acks from daemons that are no longer children vouch for nothing here.
    erase_if(op.acked, [&](const auto& ack) { return !state.slot_of_child(ack.first); });
    // Weakened: the ones that already forwarded leave the new children to
    // their parent's replay, which nobody sends.
    if (!rule_on(RepairRule::replay_at_once) && op.forwarded()) {
      for (Vpid child : state.children)
        op.sent_to.try_emplace(child, *state.slot_of_child(child));
    }
    advance(now, state, id, op, out);
  }
}

void Engine::apply_op_abort(const OpAbort& abort, Outbox& out) {
  if (abort.topology == TopologyKind::bruck) {  // no broadcast is ever one
    ++stats_.malformed;
    return;
  }
  TopologyState& state = topology(abort.topology);
  if (!is_controller() && abort.op_id >= state.watermark) {
    auto found = state.ops.find(abort.op_id);
    if (found != state.ops.end()) {
      if (found->second.phase == OpPhase::held) {
        out.push(CancelTimer{TimerId{TimerKind::release_hold, abort.topology, abort.op_id}});
      }
      state.ops.erase(found);
    }
    state.aborted.insert(abort.op_id);
  }
  // Also a round overtaken by a later release: it still waits for its end.
  if (abort.fence && (abort.fence->generation > fence_generation(abort.fence->signature) ||
                      fences_.find(*abort.fence) != nullptr)) {
    end_fence(*abort.fence, abort.status, 0, nullptr, out);
  }
}

}  // namespace grove
