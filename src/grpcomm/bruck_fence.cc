// Fences as a Bruck exchange (grpcomm_fence_topology bruck): the daemons
// hosting a round's participants exchange their contributions in
// ceil(log2 P) rounds over direct links (rml/bruck_schedule.h), and each ends
// the round itself once it has heard every round: no rollup, no controller,
// no release. docs/engine.md ("The Bruck exchange") argues the rules below.
//
// Reliability: a run belongs to one epoch. A new epoch starts a new run
// among that epoch's members, each starting from everything it holds; a
// frame of an older run is dropped whole (never merged), one of a newer run
// waits for this daemon to adopt that epoch. A daemon that already ended the
// round keeps it (the newest of each signature) and rejoins a later run when
// one of its frames arrives, so every run ends the way the first one did
// wherever it ended: with every contribution any survivor could hold.
#include <algorithm>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"
#include "rml/bruck_schedule.h"

namespace grove {
namespace {

// A release is a round's payload plus at most this many bytes: a round that
// would not fit in a frame means the whole release would not either, so
// every daemon ends the round too_large by the same measure.
constexpr std::size_t kReleaseSlack = 64;

bool is_member(const std::vector<Vpid>& members, Vpid vpid) {
  return std::binary_search(members.begin(), members.end(), vpid);
}

}  // namespace

void Engine::bruck_contribute(TimeNs /*now*/, FenceRequest request, Outbox& out) {
  const FenceKey key = fences_.next_round(request.signature);
  FenceTracker* tracker = fences_.open(key);
  if (!tracker) return;  // its scope has ended: the job is gone
  tracker->local = true;
  BruckOp& op = bruck_[key];
  op.participants = std::move(request.participants);
  op.participants.insert(config_.self);  // a contributor participates, by definition
  op.placed_epoch = request.placed_epoch;
  op.local = true;
  SharedBytes own = share_bytes(std::move(request.data));
  const ByteView view = *own;
  op.contributions.insert_or_assign(config_.self, HeldBlock{std::move(own), view});
  bruck_progress(key, op, out);
}

void Engine::on_bruck_round(TimeNs /*now*/, const FrameHeader& header, const SharedBytes& payload,
                            Outbox& out) {
  if (config_.fence_topology != FenceTopology::bruck || header.radix != kBruckRadix ||
      header.tag != tags::fence_exchange) {
    refuse_fence_shape(header, out);
    return;
  }
  auto round = wire_decode<BruckRoundView>(*payload);  // views into payload
  if (!round || round->key.generation != header.op_id) {
    ++stats_.malformed;
    return;
  }
  const FenceKey key = round->key;
  auto found = bruck_.find(key);
  if (found == bruck_.end()) {
    // Ended here and no longer kept (a newer round of its signature ended),
    // or its scope ended: nobody can need this daemon's part of it.
    if (key.generation <= fences_.generation(key.signature) || fences_.scope_ended(key.signature)) {
      ++stats_.bruck_stale;
      return;
    }
    found = bruck_.try_emplace(key).first;
  }
  bruck_take(key, found->second,
             BruckOp::Early{header.sender, header.epoch, payload, std::move(*round)}, out);
  bruck_progress(key, found->second, out);
}

void Engine::bruck_take(const FenceKey& key, BruckOp& op, BruckOp::Early frame, Outbox& out) {
  // Weakened (tests only): a run, once started, is the only one.
  const std::uint64_t epoch =
      !rule_on(RepairRule::bruck_restart) && op.run.started ? op.run.epoch : membership_.epoch();
  // Weakened (tests only): a frame of an older run counts in this one.
  if (frame.epoch < epoch && rule_on(RepairRule::bruck_drop_stale)) {
    ++stats_.bruck_stale;
    return;
  }
  if (frame.epoch > epoch || (!op.local && !op.delivered)) {
    op.early.push_back(std::move(frame));  // this daemon is behind, or has not contributed
    return;
  }
  if (op.delivered && !rule_on(RepairRule::bruck_rejoin)) return;  // weakened: it never rejoins
  if (!op.run.started || op.run.epoch != epoch) bruck_start_run(key, op, out);
  BruckOp::Run& run = op.run;
  const std::uint32_t round = frame.round.round;
  const std::uint64_t size = run.members.size();
  if (round >= run.rounds ||
      run.members[bruck::hear_from(run.self_index, round, size)] != frame.from) {
    ++stats_.malformed;  // not this run's sender of that round
    return;
  }
  const std::uint64_t bit = std::uint64_t{1} << round;
  if ((run.heard & bit) != 0) {
    ++stats_.duplicates;
    return;
  }
  run.heard |= bit;
  op.too_large = op.too_large || frame.round.too_large;
  for (const auto& [vpid, data] : frame.round.contributions) {
    // Contributions are immutable: a second copy of one is the same bytes.
    if (op.contributions.try_emplace(vpid, HeldBlock{frame.payload, data}).second &&
        !is_member(run.members, vpid))
      ++run.outsiders;
  }
}

void Engine::bruck_start_run(const FenceKey& key, BruckOp& op, Outbox& out) {
  if (op.run.started) ++stats_.bruck_runs;
  BruckOp::Run run;
  run.started = true;
  run.epoch = membership_.epoch();
  // The members: living participants' daemons, less those that came back or
  // joined after the participants were placed (they host none of them).
  const bool renewed_any = !membership_.incarnations().empty();
  op.participants.for_each([&](Vpid vpid) {
    if (!membership_.is_alive(vpid)) return;
    if (renewed_any && membership_.incarnation(vpid) > op.placed_epoch) return;
    run.members.push_back(vpid);
  });
  auto self = std::lower_bound(run.members.begin(), run.members.end(), config_.self);
  run.self_index = static_cast<std::uint32_t>(self - run.members.begin());
  run.member = self != run.members.end() && *self == config_.self;
  run.rounds = run.member ? bruck::rounds(run.members.size()) : 0;
  for (const auto& entry : op.contributions)
    run.outsiders += is_member(run.members, entry.first) ? 0 : 1;
  op.run = std::move(run);
  // The frames that waited for this run (older ones are dropped there).
  std::vector<BruckOp::Early> waiting = std::move(op.early);
  op.early.clear();
  for (BruckOp::Early& frame : waiting)
    bruck_take(key, op, std::move(frame), out);
}

void Engine::bruck_progress(const FenceKey& key, BruckOp& op, Outbox& out) {
  if (!op.local && !op.delivered) return;  // its participants are not known yet
  if (!op.run.started || op.run.epoch != membership_.epoch()) {
    // An ended round rejoins only when a later run asks (bruck_take); an
    // open one starts over in the new epoch. Weakened: it keeps its run.
    if (op.delivered) return;
    if (!op.run.started || rule_on(RepairRule::bruck_restart)) bruck_start_run(key, op, out);
  }
  BruckOp::Run& run = op.run;
  while (run.sent < run.rounds &&
         (run.heard & BruckOp::Run::full(run.sent)) == BruckOp::Run::full(run.sent)) {
    bruck_send_round(key, op, run.sent, out);
    ++run.sent;
  }
  if (run.finished() && !run.decided) bruck_finish(key, op, out);
}

void Engine::bruck_send_round(const FenceKey& key, BruckOp& op, std::uint32_t round, Outbox& out) {
  const BruckOp::Run& run = op.run;
  const std::uint64_t size = run.members.size();
  const Vpid target = run.members[bruck::send_to(run.self_index, round, size)];
  BruckRoundView message{key, round, op.too_large, {}};
  if (!op.too_large) {
    // The receiver's missing blocks (held: the rounds before this one were
    // heard), then whatever is held of daemons outside the members.
    const std::uint64_t blocks = bruck::blocks_sent(round, size);
    for (std::uint64_t offset = 0; offset < blocks; ++offset) {
      const Vpid owner = run.members[bruck::block_owner(run.self_index, offset, size)];
      auto held = op.contributions.find(owner);
      if (held != op.contributions.end())
        message.contributions.emplace_back(owner, held->second.bytes);
    }
    if (run.outsiders > 0 && rule_on(RepairRule::bruck_carry_outsiders)) {
      for (const auto& [vpid, held] : op.contributions) {
        if (!is_member(run.members, vpid)) message.contributions.emplace_back(vpid, held.bytes);
      }
    }
    std::sort(message.contributions.begin(), message.contributions.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  Bytes payload = encode(message);
  if (payload.size() > config_.max_payload) {
    op.too_large = true;
    message.contributions.clear();
    message.too_large = true;
    payload = encode(message);
  }
  const FrameHeader header = header_for(FrameType::fence_exchange, tags::fence_exchange,
                                        TopologyKind::bruck, key.generation, target);
  send(target, SendPath::direct, header, share_bytes(std::move(payload)), out);
}

void Engine::bruck_finish(const FenceKey& key, BruckOp& op, Outbox& out) {
  op.run.decided = true;
  FenceStatus status = FenceStatus::ok;
  Vpid lost = 0;
  SharedBytes release;
  std::optional<Vpid> missing;
  op.participants.for_each([&](Vpid vpid) {
    if (!missing && op.contributions.count(vpid) == 0) missing = vpid;
  });
  if (op.too_large) {
    status = FenceStatus::too_large;
  } else if (missing) {
    // Every member's block arrived, so the missing one is a member of no
    // run: it died (or came back) before anyone alive held its part.
    status = FenceStatus::participant_lost;
    lost = *missing;
  } else if (!op.delivered) {
    FenceReleaseView message{key, FenceStatus::ok, 0, {}};
    for (const auto& [vpid, held] : op.contributions) {
      if (op.participants.contains(vpid)) message.contributions.emplace_back(vpid, held.bytes);
    }
    Bytes payload = encode(message);
    if (payload.size() + kReleaseSlack > config_.max_payload) {
      status = FenceStatus::too_large;
    } else {
      release = share_bytes(std::move(payload));
    }
  }
  if (op.delivered) {
    // A later run ended it again: it must end as it did the first time (with
    // ok, every participant's contribution, which are the same bytes).
    const bool too_large_again = status == FenceStatus::ok && op.status == FenceStatus::too_large;
    if (!too_large_again && (status != op.status || lost != op.lost)) ++stats_.bruck_redecided;
    return;
  }
  op.delivered = true;
  op.status = status;
  op.lost = lost;
  // Only the newest ended round of a signature is kept: a daemon still in an
  // older round has not contributed to this one, so this one cannot have
  // ended anywhere while it runs (docs/engine.md).
  for (auto older = bruck_.lower_bound(FenceKey{key.signature, 0});
       older != bruck_.end() && older->first.signature == key.signature &&
       older->first.generation < key.generation;) {
    older = older->second.delivered ? bruck_.erase(older) : std::next(older);
  }
  end_fence(key, status, lost, std::move(release), out);
}

void Engine::repair_bruck(Outbox& out) {
  const std::uint64_t epoch = membership_.epoch();
  for (auto& [key, op] : bruck_) {
    if (!op.local && !op.delivered) {
      // Frames waiting for a contribution: those of older runs can go.
      std::erase_if(op.early, [&](const BruckOp::Early& frame) { return frame.epoch < epoch; });
      continue;
    }
    const bool asked =
        std::any_of(op.early.begin(), op.early.end(),
                    [&](const BruckOp::Early& frame) { return frame.epoch == epoch; });
    if (op.delivered && asked && (!op.run.started || op.run.epoch != epoch) &&
        rule_on(RepairRule::bruck_rejoin))
      bruck_start_run(key, op, out);
    bruck_progress(key, op, out);
  }
}

void Engine::refuse_fence_shape(const FrameHeader& header, Outbox& out) {
  ++stats_.mismatches;
  out.push(ShowHelpTopic{
      "help-grpcomm.txt",
      "fence-topology-mismatch",
      {"vpid " + std::to_string(config_.self), "vpid " + std::to_string(header.sender),
       std::string(frame_type_name(header.type)), std::string(topology_name(header.topology)),
       config_.fence_topology == FenceTopology::bruck ? "bruck" : "tree"}});
}

std::size_t Engine::open_bruck_exchanges() const {
  return static_cast<std::size_t>(std::count_if(
      bruck_.begin(), bruck_.end(),
      [](const auto& entry) { return entry.second.local && !entry.second.delivered; }));
}

void Engine::end_fence_scope(const std::string& scope) {
  fences_.end_scope(scope);
  if (scope.empty()) return;
  std::erase_if(bruck_,
                [&](const auto& entry) { return entry.first.signature.starts_with(scope); });
}

Status Engine::check_bruck() const {
  if (stats_.bruck_redecided != 0) {
    return Error{"a Bruck round ended again otherwise than it first ended here"};
  }
  const std::string* last_signature = nullptr;
  for (const auto& [key, op] : bruck_) {
    const BruckOp::Run& run = op.run;
    const std::string where =
        "Bruck round " + std::to_string(key.generation) + " of '" + key.signature + "'";
    if (run.sent > run.rounds || (run.heard & ~BruckOp::Run::full(run.rounds)) != 0) {
      return Error{where + ": rounds beyond its schedule"};
    }
    if (run.sent > 0 &&
        (run.heard & BruckOp::Run::full(run.sent - 1)) != BruckOp::Run::full(run.sent - 1)) {
      return Error{where + ": a round sent before the rounds below it were heard"};
    }
    if (op.delivered && fences_.generation(key.signature) < key.generation &&
        !fences_.scope_ended(key.signature)) {
      return Error{where + ": ended but not recorded as released"};
    }
    if (op.delivered) {
      if (last_signature && *last_signature == key.signature) {
        return Error{where + ": two ended rounds of one signature kept"};
      }
      last_signature = &key.signature;
    }
  }
  return ok_status();
}

}  // namespace grove
