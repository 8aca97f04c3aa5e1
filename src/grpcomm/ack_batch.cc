// Acks of fence releases that share frames. Back-to-back fences complete
// their releases at each daemon a few hundred microseconds apart, and each
// used to answer its release parent with a frame of its own: a third of a
// fence's frames, and a wake-up of the parent for each. Under ack_delay_ns
// an ack waits with the others made to the same daemon on the same
// topology, and they go as one frame with the daemon's first input after
// the delay (or on an idle timer).
//
// Nothing about what an ack says changes: each is made when it would have
// been sent (its header, the slot it vouches for, its path) and is only
// later on the wire, which the receiver cannot tell from a slow network.
// A batch holds acks of one epoch and slot only; a change of either sends
// the batch first. A change of the view sends every batch at once (the
// repair then re-acks what it must, as before).
#include <algorithm>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"

namespace grove {
namespace {

// A bound on one frame's acks: a daemon that completes releases faster than
// this many per delay sends more frames, not larger ones.
constexpr std::size_t kMaxAcksPerFrame = 256;
// Acks go with the first input after the delay (a wake-up the daemon has
// anyway); the timer, for a daemon that gets no input, waits this many
// delays, so that fences slower than the delay do not each cost a wake-up
// of their own for their acks.
constexpr TimeNs kIdleFlushDelays = 3;

}  // namespace

void Engine::send_ack(TimeNs now, const TopologyState& state, std::uint64_t op_id,
                      std::uint16_t tag, std::uint16_t op_flags, Vpid requester, SendPath path,
                      Outbox& out) {
  FrameHeader header = header_for(FrameType::xcast_ack, tag, state.kind, op_id, requester);
  if (config_.ack_delay_ns == 0 || (op_flags & kFrameAcksMayWait) == 0) {
    send(requester, path, header, state.ack, out);
    return;
  }
  const std::pair<TopologyKind, Vpid> key{state.kind, requester};
  auto found = std::find_if(ack_batches_.begin(), ack_batches_.end(),
                            [&](const auto& entry) { return entry.first == key; });
  if (found != ack_batches_.end()) {
    AckBatch& batch = found->second;
    if (batch.header.epoch == header.epoch && batch.slot == state.own_slot && batch.path == path &&
        batch.more.size() + 1 < kMaxAcksPerFrame) {
      batch.more.push_back(op_id);
      return;
    }
    // Another epoch, slot or path, or a full frame: what waits goes first.
    AckBatch waiting = std::move(batch);
    ack_batches_.erase(found);
    send_ack_batch(std::move(waiting), out);
  }
  if (ack_batches_.empty()) acks_waiting_since_ = now;
  ack_batches_.push_back({key, AckBatch{header, state.own_slot, path, {}}});
  if (!ack_timer_armed_) {
    ack_timer_armed_ = true;
    out.push(SetTimer{TimerId{TimerKind::ack_flush, TopologyKind::routing, 0},
                      now + kIdleFlushDelays * config_.ack_delay_ns});
  }
}

void Engine::flush_old_acks(TimeNs now, Outbox& out) {
  if (ack_batches_.empty() || now < acks_waiting_since_ + config_.ack_delay_ns) return;
  flush_acks(out);
}

void Engine::flush_acks(Outbox& out) {
  if (ack_timer_armed_) {  // nothing left for it (on_timer disarms it before)
    ack_timer_armed_ = false;
    out.push(CancelTimer{TimerId{TimerKind::ack_flush, TopologyKind::routing, 0}});
  }
  std::vector<std::pair<std::pair<TopologyKind, Vpid>, AckBatch>> batches;
  batches.swap(ack_batches_);
  for (auto& entry : batches)
    send_ack_batch(std::move(entry.second), out);
}

void Engine::send_ack_batch(AckBatch batch, Outbox& out) {
  // One op: a plain ack, byte for byte what it would have been at once.
  SharedBytes payload = batch.more.empty()
                            ? share_bytes(encode(XcastAck{batch.slot}))
                            : share_bytes(encode(XcastAckBatch{batch.slot, std::move(batch.more)}));
  send(batch.header.destination, batch.path, batch.header, std::move(payload), out);
}

}  // namespace grove
