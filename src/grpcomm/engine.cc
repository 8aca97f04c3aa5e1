// The engine's front door: frame dispatch, membership, reports and relays.
// Broadcast mechanics are in xcast.cc, fences in fence.cc.
#include "grpcomm/engine.h"

#include <algorithm>
#include <cassert>

#include "grpcomm/tags.h"

namespace grove {

Engine::Engine(EngineConfig config, Membership membership)
    : config_(std::move(config)), membership_(std::move(membership)) {
  if (!config_.tree_cache) config_.tree_cache = std::make_shared<TreeCache>();
  topology(TopologyKind::routing).kind = TopologyKind::routing;
  topology(TopologyKind::release).kind = TopologyKind::release;
  rederive_trees();
}

Engine::Engine(EngineConfig config, const JoinSeed& seed)
    : config_(std::move(config)), membership_(seed.membership) {
  if (!config_.tree_cache) config_.tree_cache = std::make_shared<TreeCache>();
  for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release}) {
    topology(kind).kind = kind;
    topology(kind).watermark = seed.watermarks[static_cast<int>(kind)];
  }
  // Weakened (tests only): the joiner starts with no rounds, as a daemon
  // present since the start would, and stamps round 1 where others are at k.
  if (rule_on(RepairRule::seed_joiners)) fences_.seed(seed.rounds);
  // Nothing here predates the newest return: nothing to repair for it.
  repaired_return_epoch_ = membership_.return_epoch();
  rederive_trees();
}

JoinSeed Engine::join_seed() const {
  JoinSeed seed{membership_, {}, fences_.snapshot()};
  for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release})
    seed.watermarks[static_cast<int>(kind)] = topology(kind).watermark;
  return seed;
}

void Engine::rederive_trees() {
  for (TopologyKind kind : {TopologyKind::routing, TopologyKind::release}) {
    TopologyState& state = topology(kind);
    state.tree = config_.tree_cache->get(membership_, radix_of(kind, config_.radices));
    // A daemon is in its own tree while it runs; UINT32_MAX only if told it died.
    const std::uint32_t slot = state.tree.slot(config_.self).value_or(UINT32_MAX);
    state.own_slot_moved = state.ack != nullptr && slot != state.own_slot;
    if (state.ack == nullptr || state.own_slot_moved) {
      state.own_slot = slot;
      // Usually the same slot in both trees: one buffer for both then.
      const TopologyState& routing = topology(TopologyKind::routing);
      state.ack = kind == TopologyKind::release && routing.own_slot == slot && routing.ack
                      ? routing.ack
                      : share_bytes(encode(XcastAck{slot}));
    }
    state.parent = state.tree.parent(config_.self);
    // Compared in place, rebuilt only if they changed: after a repair most
    // daemons keep their children, and a million of them re-derive.
    std::size_t seen = 0;
    bool same = true;
    state.tree.for_each_child(config_.self, [&](Vpid child, std::uint32_t child_slot) {
      same = same && seen < state.children.size() && state.children[seen] == child &&
             state.child_slots[seen] == child_slot;
      ++seen;
    });
    state.children_moved = !same || seen != state.children.size();
    if (state.children_moved) {
      state.children.clear();
      state.child_slots.clear();
      state.tree.for_each_child(config_.self, [&](Vpid child, std::uint32_t child_slot) {
        state.children.push_back(child);
        state.child_slots.push_back(child_slot);
      });
    }
  }
}

std::optional<std::uint32_t> Engine::TopologyState::slot_of_child(Vpid vpid) const {
  for (std::size_t i = 0; i < children.size(); ++i) {
    if (children[i] == vpid) return child_slots[i];
  }
  return std::nullopt;
}

std::uint64_t Engine::fence_generation(const std::string& signature) const {
  return fences_.generation(signature);
}

FrameHeader Engine::header_for(FrameType type, std::uint16_t tag, TopologyKind kind,
                               std::uint64_t op_id, Vpid destination) const {
  FrameHeader header;
  header.type = type;
  header.tag = tag;
  header.topology = kind;
  header.radix = static_cast<std::uint16_t>(radix_of(kind, config_.radices));
  header.op_id = op_id;
  header.origin = config_.self;
  header.destination = destination;
  header.sender = config_.self;
  header.tree_version = membership_.tree_version();
  header.epoch = membership_.epoch();
  header.watermark = kind == TopologyKind::bruck ? 0 : topology(kind).watermark;
  return header;
}

void Engine::send(Vpid target, SendPath path, const FrameHeader& header, SharedBytes payload,
                  Outbox& out) {
  assert(target != config_.self);  // the engine loops work for itself back internally
  WireFrame frame = make_wire_frame(header, std::move(payload));
  accounting_.count(TrafficKey{header.type, header.tag, header.topology}, frame.size());
  out.push(SendFrame{target, path, std::move(frame)});
}

void Engine::on_frame(TimeNs now, Vpid from, std::span<const std::byte> bytes, Outbox& out) {
  if (bytes.size() < kFrameHeaderSize) {
    ++stats_.malformed;
    return;
  }
  on_frame(now, from, wire_frame_from_bytes(bytes), out);
}

void Engine::on_frame(TimeNs now, Vpid from, const WireFrame& frame, Outbox& out) {
  flush_old_acks(now, out);
  auto decoded = decode_wire_frame(frame, config_.max_payload);
  // The hop must be who the header says, a member, and not this daemon: an
  // engine answers its sender, and must never answer itself or a stranger.
  // A vpid past this daemon's view is a joiner only if it has seen a newer
  // epoch (this daemon will hear of the join); its frames are taken then.
  if (!decoded || decoded->sender != from || from == config_.self ||
      (!membership_.contains(from) &&
       (from < membership_.vpid_end() || decoded->epoch <= membership_.epoch()))) {
    ++stats_.malformed;
    return;
  }
  const FrameHeader& header = *decoded;
  // Only a Bruck round is stamped bruck, and it always is: nothing else may
  // look up a tree by it.
  if ((header.topology == TopologyKind::bruck) != (header.type == FrameType::fence_exchange)) {
    ++stats_.malformed;
    return;
  }
  if (header.destination != config_.self) {
    // Only routed reports travel through; everything else is addressed hop by hop.
    if (header.type == FrameType::op_report) {
      relay_routed(header, frame, out);
    } else {
      ++stats_.malformed;
    }
    return;
  }
  switch (header.type) {
    case FrameType::xcast_data:
      on_xcast_data(now, header, frame.payload, out);
      return;
    case FrameType::xcast_ack:
      on_xcast_ack(now, header, *frame.payload, out);
      return;
    case FrameType::fence_rollup:
      on_fence_rollup(now, header, *frame.payload, out);
      return;
    case FrameType::op_report:
      on_op_report(now, header, *frame.payload, out);
      return;
    case FrameType::fence_exchange:
      on_bruck_round(now, header, frame.payload, out);
      return;
    case FrameType::control:
      ++stats_.malformed;  // the daemon handles its own traffic before the engine
      return;
  }
}

void Engine::relay_routed(const FrameHeader& header, const WireFrame& frame, Outbox& out) {
  const Tree& routing = topology(TopologyKind::routing).tree;
  auto next = routing.next_hop(config_.self, header.destination);
  if (!next) return;       // the destination is gone; its report no longer matters
  WireFrame copy = frame;  // the payload is shared, only the header is rewritten
  set_frame_sender(copy.header, config_.self);
  accounting_.count(TrafficKey{header.type, header.tag, header.topology}, copy.size());
  out.push(SendFrame{*next, SendPath::relay, std::move(copy)});
}

Bytes Engine::encode_notice() const {
  MembershipNotice notice{membership_.epoch(),
                          membership_.failed(),
                          membership_.vpid_end(),
                          {},
                          membership_.tree_version()};
  for (const Incarnation& entry : membership_.incarnations())
    notice.incarnations.emplace_back(entry.vpid, entry.epoch);
  return encode(notice);
}

void Engine::declare_departure(TimeNs now, Vpid vpid, Outbox& out) {
  if (!is_controller() || vpid == kControllerVpid || !membership_.is_alive(vpid)) return;
  membership_.apply({MembershipEventKind::departure, vpid, membership_.epoch() + 1});
  rederive_trees();
  out.push(
      MembershipChanged{membership_.epoch(), membership_.tree_version(), membership_.failed()});
  // The notice goes out first, on the repaired routing tree, so a promoted
  // daemon hears of its promotion before the replays that depend on it.
  release_bcast(now, tags::membership, encode_notice(), out);
  repair_all(now, out);
}

bool Engine::declare_return(TimeNs now, Vpid vpid, Outbox& out) {
  if (!is_controller() || vpid == kControllerVpid || membership_.is_alive(vpid)) return false;
  if (!membership_.contains(vpid) && vpid < membership_.vpid_end()) return false;  // a hole
  // A join takes the next vpids; one far past the end is a caller's mistake.
  if (vpid >= kMaxVpidEnd || vpid > membership_.vpid_end() + 1024) return false;
  membership_.apply({MembershipEventKind::return_, vpid, membership_.epoch() + 1});
  rederive_trees();
  out.push(
      MembershipChanged{membership_.epoch(), membership_.tree_version(), membership_.failed()});
  release_bcast(now, tags::membership, encode_notice(), out);
  repair_all(now, out);
  return true;
}

bool Engine::adopt_notice(const Bytes& payload, Outbox& out) {
  auto notice = wire_decode<MembershipNotice>(payload);
  if (!notice) {
    ++stats_.malformed;
    return false;
  }
  std::vector<Incarnation> incarnations;
  incarnations.reserve(notice->incarnations.size());
  for (const auto& [vpid, epoch] : notice->incarnations)
    incarnations.push_back(Incarnation{vpid, epoch});
  if (!membership_.adopt(notice->epoch, notice->failed, notice->vpid_end, incarnations,
                         notice->tree_version))
    return false;
  rederive_trees();
  out.push(
      MembershipChanged{membership_.epoch(), membership_.tree_version(), membership_.failed()});
  return true;
}

void Engine::repair_all(TimeNs now, Outbox& out) {
  flush_acks(out);  // made in the old view: on the wire before the repair's

  const bool returned = membership_.return_epoch() > repaired_return_epoch_ &&
                        rule_on(RepairRule::void_acks_on_return);
  // The daemons renewed since the last repair for a return: new processes at
  // vpids this daemon may have sent to before (sorted, as incarnations are).
  renewed_.clear();
  if (returned) {
    for (const Incarnation& entry : membership_.incarnations()) {
      if (entry.epoch > repaired_return_epoch_) renewed_.push_back(entry.vpid);
    }
  }
  repaired_return_epoch_ = membership_.return_epoch();
  repair_ops(now, topology(TopologyKind::routing), returned, out);
  repair_ops(now, topology(TopologyKind::release), returned, out);
  if (config_.fence_topology == FenceTopology::bruck) {
    repair_bruck(out);
  } else {
    repair_fences(now, returned, out);
  }
}

bool Engine::topology_matches(const FrameHeader& header) const {
  TopologyKind expected = topology_for_tag(header.tag, config_.low_radix_release);
  return header.topology == expected && header.radix == radix_of(expected, config_.radices);
}

void Engine::refuse_mismatch(const FrameHeader& header, Outbox& out) {
  ++stats_.mismatches;
  TopologyKind expected = topology_for_tag(header.tag, config_.low_radix_release);
  out.push(ShowHelpTopic{
      "help-grpcomm.txt",
      "release-topology-mismatch",
      {"vpid " + std::to_string(config_.self), "vpid " + std::to_string(header.sender),
       std::string(topology_name(header.topology)), std::to_string(header.radix),
       std::string(topology_name(expected)), std::to_string(radix_of(expected, config_.radices))}});
  if (is_controller()) return;
  OpReport report{header.topology, header.op_id,    config_.self,
                  header.tag,      header.topology, header.radix};
  const Tree& routing = topology(TopologyKind::routing).tree;
  auto next = routing.next_hop(config_.self, kControllerVpid);
  if (!next) return;
  FrameHeader frame = header_for(FrameType::op_report, tags::op_report, TopologyKind::routing,
                                 header.op_id, kControllerVpid);
  send(*next, SendPath::routed, frame, share_bytes(encode(report)), out);
}

void Engine::on_op_report(TimeNs now, const FrameHeader& /*header*/, const Bytes& payload,
                          Outbox& out) {
  if (!is_controller()) return;
  auto report = wire_decode<OpReport>(payload);
  if (!report || report->topology == TopologyKind::bruck) {
    ++stats_.malformed;
    return;
  }
  TopologyState& state = topology(report->topology);
  auto found = state.ops.find(report->op_id);
  if (found == state.ops.end()) return;  // already complete or aborted
  OpAbort abort{report->topology, report->op_id, found->second.tag, FenceStatus::topology_mismatch,
                std::nullopt};
  if (found->second.tag == tags::fence_release) {
    auto plain =
        (found->second.flags & kFrameCompressed)
            ? inflate_payload(config_.inflate_cache.get(), found->second.wire, config_.max_payload)
            : Result<SharedBytes>(found->second.wire);
    if (plain) {
      if (auto release = decode_fence_release_header(**plain)) {
        abort.fence = release->key;
      }
    }
  }
  finish_at_origin(now, state, report->op_id, found->second, /*ok=*/false, out);
  release_bcast(now, tags::op_abort, encode(abort), out);
}

Status Engine::check_op(const TopologyState& state, std::uint64_t id, const XcastOp& op) const {
  if (id < state.watermark) {
    return Error{"op " + std::to_string(id) + " held below the watermark"};
  }
  if (is_controller() && id >= state.next_id) {
    return Error{"op " + std::to_string(id) + " beyond the originator's counter"};
  }
  if (!op.forwarded() && !op.sent_to.empty()) {
    return Error{"op " + std::to_string(id) + " sent to children before forwarding"};
  }
  if (op.phase == OpPhase::complete && is_controller()) {
    return Error{"the originator kept completed op " + std::to_string(id)};
  }
  // Both sets are ordered: one merge, not a lookup per member.
  if (!std::includes(op.requesters.begin(), op.requesters.end(), op.answered.begin(),
                     op.answered.end())) {
    return Error{"answered a daemon that never asked"};
  }
  return ok_status();
}

Status Engine::check_tables() const {
  for (const TopologyState& state : topologies_) {
    if (state.ops.empty()) continue;
    // Ops are ordered by id: the lowest and highest bound them all.
    if (const std::uint64_t lowest = state.ops.begin()->first; lowest < state.watermark) {
      return Error{"op " + std::to_string(lowest) + " held below the watermark"};
    }
    if (const std::uint64_t highest = state.ops.back().first;
        is_controller() && highest >= state.next_id) {
      return Error{"op " + std::to_string(highest) + " beyond the originator's counter"};
    }
  }
  if (const FenceKey* key = fences_.released_but_open(/*local_too=*/is_controller())) {
    return Error{"fence '" + key->signature + "' round " + std::to_string(key->generation) +
                 " still open after its release"};
  }
  return check_bruck();
}

Status Engine::check_invariants() const {
  for (const TopologyState& state : topologies_) {
    for (const auto& [id, op] : state.ops) {
      if (auto status = check_op(state, id, op); !status) return status;
    }
  }
  return check_tables();
}

Status Engine::check_invariants_after_input() {
  Status status = ok_status();
  for (const auto& [kind, id] : touched_) {
    const TopologyState& state = topology(kind);
    auto found = state.ops.find(id);
    if (found == state.ops.end()) continue;  // finished or dropped since: nothing to hold
    status = check_op(state, id, found->second);
    if (!status) break;
  }
  touched_.clear();  // cleared, not swapped away: its buffer serves every input
  return status ? check_tables() : status;
}

}  // namespace grove
