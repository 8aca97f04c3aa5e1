// The collective engine: reliable broadcast (xcast) over a topology, fences
// that roll up the routing tree and release through one seam, and repair when
// a daemon dies. A plain state machine: inputs are method calls with `now`
// handed in, outputs are effects appended to an Outbox. No sockets, threads,
// clocks or randomness; the daemon and the simulator drive the same code.
//
// The five properties of a derived tree under repair (seed 001, 8.7.2.6.1)
// live here: one derivation (rml/tree.h); no "is the sender my parent" screen;
// an ack answers whoever asked; nobody defers a replay; and a receiver behind
// the sender's tree version that was addressed by a non-parent takes the
// payload, delivers it, and parks the op until the notice lands.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "grpcomm/bruck_exchange.h"
#include "grpcomm/effects.h"
#include "grpcomm/fence_table.h"
#include "grpcomm/inflate_cache.h"
#include "grpcomm/messages.h"
#include "grpcomm/repair_rules.h"
#include "rml/frame.h"
#include "rml/membership.h"
#include "rml/topology.h"
#include "rml/traffic.h"
#include "rml/tree.h"
#include "rml/tree_cache.h"
#include "rml/vpid_set.h"
#include "util/flat_map.h"

namespace grove {

struct EngineConfig {
  Vpid self = 0;
  TopologyRadices radices;
  bool low_radix_release = true;
  // grpcomm_fence_topology: fences over the two trees, or a Bruck exchange.
  FenceTopology fence_topology = FenceTopology::tree;
  std::uint64_t compress_threshold = 4096;  // payloads larger than this are deflated
  std::uint64_t max_payload = 256u << 20;   // decompression and frame limit
  TimeNs release_delay_ns = 0;              // grpcomm_release_delay_ms
  // How long an ack of a fence release may wait for others to the same
  // daemon, so that back-to-back fences share ack frames (0: each at once;
  // grpcomm_release_ack_delay_us).
  TimeNs ack_delay_ns = 0;
  // The fence whose releases are acked at once even so: the CLI's barrier
  // benchmark starts each round when the last one's release is complete.
  std::string prompt_ack_signature;
  std::int64_t release_delay_target = -1;  // vpid that delays, -1: all
  // Shared memo of derivations (the simulator gives every engine the same
  // one); null means the engine keeps its own.
  std::shared_ptr<TreeCache> tree_cache;
  // Shared memo of inflated payloads (the simulator's; inflate_cache.h);
  // null: every payload is inflated where it is delivered.
  std::shared_ptr<InflateCache> inflate_cache;
  // Tests only: repair rules replaced by their naive forms (repair_rules.h).
  RepairRules weakened;
  // The simulator's: remember which ops each input touched, so
  // check_invariants_after_input() checks those and not every op held.
  bool track_touched_ops = false;
};

struct FenceRequest {
  std::string signature;  // names the participant set; equal on every daemon
  VpidSet participants;   // daemons hosting participants
  Bytes data;             // this daemon's contribution (empty for a barrier)
  // The epoch the participants were placed in (the job's launch): a daemon
  // that came back or joined after it hosts none of them, so the controller
  // counts it lost to this fence. UINT64_MAX: not stated (only death counts).
  std::uint64_t placed_epoch = UINT64_MAX;
};

// What a daemon that comes back or joins starts from, taken from the
// controller at the moment it declared the return or join: the membership
// of that epoch, each topology's watermark (ops below it are complete
// everywhere, so the newcomer never delivers them) and the fence rounds
// (the joined-late rule: it must not stamp round 1 where the others are at k).
struct JoinSeed {
  Membership membership;
  std::uint64_t watermarks[2] = {1, 1};  // by TopologyKind
  FenceRounds rounds;
};

struct EngineStats {
  std::uint64_t parked = 0;          // ops parked behind a newer tree version
  std::uint64_t replays = 0;         // data frames sent to a child after a repair
  std::uint64_t duplicates = 0;      // data frames for an op already held
  std::uint64_t mismatches = 0;      // frames refused for a topology mismatch
  std::uint64_t malformed = 0;       // frames or payloads refused as malformed
  std::uint64_t rollup_resends = 0;  // fence rollups re-sent after a repair
  std::uint64_t bruck_runs = 0;      // Bruck runs started after the first (a new epoch)
  std::uint64_t bruck_stale = 0;     // Bruck frames of an older epoch, dropped
  // A Bruck round that ended again in a later run, otherwise than the first
  // time (check_invariants reports it: docs/engine.md argues it never happens).
  std::uint64_t bruck_redecided = 0;
};

class Engine {
 public:
  Engine(EngineConfig config, Membership membership);
  // A daemon that came back at its old vpid or joined: config.self is in the
  // seed's membership, alive.
  Engine(EngineConfig config, const JoinSeed& seed);

  // A frame arrived from the peer `from` (the hop that sent it).
  void on_frame(TimeNs now, Vpid from, const WireFrame& frame, Outbox& out);
  // The same for contiguous bytes (copies the payload once).
  void on_frame(TimeNs now, Vpid from, std::span<const std::byte> frame, Outbox& out);
  void on_timer(TimeNs now, TimerId id, Outbox& out);

  // Controller only: a daemon is gone. Assigns the next epoch, repairs, and
  // broadcasts the complete failed set on the routing tree.
  void declare_departure(TimeNs now, Vpid vpid, Outbox& out);

  // Controller only: a lost daemon came back at its vpid, or a new one joined
  // at a vpid past the end of the daemon set (any vpid skipped on the way is
  // failed). Assigns the next epoch, broadcasts the complete view and
  // repairs; every ack made before this epoch stops vouching (rule 7).
  // Returns false (and does nothing) for the controller or a living member.
  bool declare_return(TimeNs now, Vpid vpid, Outbox& out);
  // Controller only: what the daemon that just came back or joined starts from.
  JoinSeed join_seed() const;

  // Controller only: the release seam. Broadcasts payload on the topology the
  // tag selects; returns the op id on that topology.
  // `flags`: frame flags the op carries to every daemon (kFrameAcksMayWait).
  std::uint64_t release_bcast(TimeNs now, std::uint16_t tag, std::span<const std::byte> payload,
                              Outbox& out, std::uint16_t flags = 0);

  // Any daemon: this daemon's contribution to the next round of a fence.
  void contribute(TimeNs now, FenceRequest request, Outbox& out);

  // A scope of fence signatures (a job's namespace, as a prefix) has ended:
  // forget its rounds and drop stragglers for it (grpcomm/fence_table.h).
  void end_fence_scope(const std::string& scope);

  // Which daemon holds releases (grpcomm_release_delay_target); -1: every daemon.
  void set_release_delay_target(std::int64_t vpid) { config_.release_delay_target = vpid; }

  Vpid self() const { return config_.self; }
  bool is_controller() const { return config_.self == kControllerVpid; }
  const EngineConfig& config() const { return config_; }
  const Membership& membership() const { return membership_; }
  const Tree& tree(TopologyKind kind) const { return topology(kind).tree; }
  const Accounting& accounting() const { return accounting_; }
  const EngineStats& stats() const { return stats_; }
  // Ops this daemon still holds (for invariants and status).
  std::size_t open_ops(TopologyKind kind) const { return topology(kind).ops.size(); }
  std::size_t open_fences() const { return fences_.open_rounds(); }
  // Bruck exchanges this daemon contributed to and has not ended. Frames of
  // a round it never contributes to (its ranks gave up after a failed round)
  // wait until the job's scope ends, as a tree's straggling rollups do.
  std::size_t open_bruck_exchanges() const;
  // Controller only: its oldest broadcast not yet complete on every daemon
  // (the controller's stall watch; an op ends at its origin once all acked).
  struct OpenBroadcast {
    TopologyKind kind = TopologyKind::routing;
    std::uint64_t id = 0;
    std::uint16_t tag = 0;
    TimeNs started_ns = 0;
  };
  std::optional<OpenBroadcast> oldest_open_broadcast() const;
  // Signatures whose last round this daemon remembers (bounded by end_fence_scope).
  std::size_t known_fence_signatures() const { return fences_.known_signatures(); }
  // The last released round of a fence signature (0: none yet).
  std::uint64_t fence_generation(const std::string& signature) const;
  // The last released round of every fence signature in `scope`.
  std::vector<std::pair<std::string, std::uint64_t>> released_fence_rounds(
      const std::string& scope) const {
    return fences_.released_in_scope(scope);
  }

  // Internal consistency; the simulator calls it after every input. Returns
  // the first violated invariant.
  Status check_invariants() const;
  // The same after one input (needs track_touched_ops): the per-op checks
  // run on the ops that input touched, the only ones it can have broken.
  Status check_invariants_after_input();

 private:
  // Where an op is in forwarding. Transitions:
  //   received -> held         first receipt, while grpcomm_release_delay_ms holds it
  //   received -> forwarding   the first advance sends to every child
  //   held -> forwarding       the hold's timer fires
  //   forwarding -> complete   every child's ack vouches for its current slot
  //   complete -> forwarding   a repair gave it a child to reach or an ack to wait for
  // Parking is a gate beside the phase, not a phase: a parked op waits for a
  // tree version whatever its phase, and resumes where it was.
  enum class OpPhase : std::uint8_t { received, held, forwarding, complete };

  struct XcastOp {
    std::uint16_t tag = 0;
    std::uint16_t flags = 0;
    SharedBytes wire;  // payload as on the wire, held for replay
    // Children this op was forwarded to, with the slot each held then: a child
    // that has since died or moved is sent to again in its new place.
    FlatMap<Vpid, std::uint32_t> sent_to;
    // sent_to covers every child of this tree version (UINT64_MAX: not known
    // to). Children change only with the version, so advance() skips the
    // search for targets until it moves or repair_ops() takes entries out.
    std::uint64_t sent_all_version = UINT64_MAX;
    // The newest acknowledgement from each child: the epoch and slot it was
    // made in, which name the subtree it vouches for (ack_vouches).
    FlatMap<Vpid, AckStamp> acked;
    FlatSet<Vpid> requesters;  // everyone who sent us the data
    FlatSet<Vpid> answered;    // requesters acknowledged from this daemon's current slot
    OpPhase phase = OpPhase::received;
    std::optional<std::uint64_t> parked_until;  // the tree version it waits for
    TimeNs started_ns = 0;                      // originator only
    bool forwarded() const { return phase == OpPhase::forwarding || phase == OpPhase::complete; }
  };

  struct TopologyState {
    TopologyKind kind = TopologyKind::routing;
    Tree tree;
    std::optional<Vpid> parent;   // this daemon's parent in `tree`
    std::uint32_t own_slot = 0;   // this daemon's slot in `tree`
    bool own_slot_moved = false;  // the last re-derivation moved it
    SharedBytes ack;              // this daemon's acks on this topology: its slot
    // This daemon's children in `tree` with their slots (read for every op
    // step, so derived once per re-derivation).
    std::vector<Vpid> children;
    std::vector<std::uint32_t> child_slots;
    bool children_moved = false;  // the last re-derivation changed them
    std::optional<std::uint32_t> slot_of_child(Vpid vpid) const;
    // By id. A flat map: a daemon holds a few ops at a time, and a node per
    // op was an allocation per op per daemon. Inserting or erasing an op moves
    // the others: no XcastOp& is held across a call that can do either
    // (deliver() can, through an abort).
    FlatMap<std::uint64_t, XcastOp> ops;
    std::uint64_t next_id = 1;    // originator's counter (ids start at 1)
    std::uint64_t watermark = 1;  // ops below this id are complete on every daemon
    std::set<std::uint64_t> aborted;
  };

  TopologyState& topology(TopologyKind kind) { return topologies_[static_cast<int>(kind)]; }
  const TopologyState& topology(TopologyKind kind) const {
    return topologies_[static_cast<int>(kind)];
  }

  // engine.cc: frames, membership, reports.
  void rederive_trees();
  void send(Vpid target, SendPath path, const FrameHeader& header, SharedBytes payload,
            Outbox& out);
  FrameHeader header_for(FrameType type, std::uint16_t tag, TopologyKind kind, std::uint64_t op_id,
                         Vpid destination) const;
  // Adopts a notice; returns whether the view changed (trees re-derived).
  bool adopt_notice(const Bytes& payload, Outbox& out);
  // The controller's complete view, as a notice.
  Bytes encode_notice() const;
  // After a change of the view: every op and fence catches up. After a
  // return (rule 7) every held op goes to every child again and every
  // rollup to the parent: the returner is a new process holding nothing.
  void repair_all(TimeNs now, Outbox& out);
  void on_op_report(TimeNs now, const FrameHeader& header, const Bytes& payload, Outbox& out);
  void relay_routed(const FrameHeader& header, const WireFrame& frame, Outbox& out);
  bool topology_matches(const FrameHeader& header) const;
  void refuse_mismatch(const FrameHeader& header, Outbox& out);

  // xcast.cc: reliable broadcast over one topology.
  void on_xcast_data(TimeNs now, const FrameHeader& header, const SharedBytes& payload,
                     Outbox& out);
  void on_xcast_ack(TimeNs now, const FrameHeader& header, const Bytes& payload, Outbox& out);
  // One child's ack of one op (its stamp, then the op advances).
  void take_ack(TimeNs now, TopologyState& state, const FrameHeader& header, std::uint64_t op_id,
                std::uint32_t slot, Outbox& out);
  // ack_batch.cc: an ack to `requester` now, or, for a fence release under
  // ack_delay_ns, with the others to it in one frame when the delay ends.
  void send_ack(TimeNs now, const TopologyState& state, std::uint64_t op_id, std::uint16_t tag,
                std::uint16_t op_flags, Vpid requester, SendPath path, Outbox& out);
  // Sends every waiting ack (the delay ended, or the view is about to change).
  void flush_acks(Outbox& out);
  // At any input: the waiting acks go now if the oldest has waited the delay
  // (the daemon is awake anyway; the timer is only for an idle daemon).
  void flush_old_acks(TimeNs now, Outbox& out);
  struct AckBatch;
  void send_ack_batch(AckBatch batch, Outbox& out);
  // Once per op, when it is created here (delivery is idempotent by construction).
  void deliver(TopologyKind kind, std::uint64_t op_id, const XcastOp& op, Outbox& out);
  void advance(TimeNs now, TopologyState& state, std::uint64_t op_id, XcastOp& op, Outbox& out);
  // `returned`: a return or join since the last repair (rule 7).
  void repair_ops(TimeNs now, TopologyState& state, bool returned, Outbox& out);
  void finish_at_origin(TimeNs now, TopologyState& state, std::uint64_t op_id, XcastOp& op, bool ok,
                        Outbox& out);
  void learn_watermark(TopologyState& state, std::uint64_t watermark, Outbox& out);
  bool should_hold(std::uint16_t tag) const;
  bool rule_on(RepairRule rule) const { return !config_.weakened.has(rule); }
  // delivery: the broadcast half hands each delivered op here, once.
  void on_delivered(const DeliverBroadcast& delivery, Outbox& out);
  void abort_delivered(const Bytes& payload, Outbox& out);
  void apply_op_abort(const OpAbort& abort, Outbox& out);

  // fence.cc: contributions up the routing tree, the release down.
  void on_fence_rollup(TimeNs now, const FrameHeader& header, const Bytes& payload, Outbox& out);
  void fence_progress(TimeNs now, const FenceKey& key, FenceTracker& tracker, Outbox& out);
  // The rollup of what this daemon holds, or of too_large when that would
  // not fit in a frame.
  void send_rollup(const FenceKey& key, FenceTracker& tracker, Vpid parent, Outbox& out);
  // Controller: the lowest participant that can never contribute (dead or
  // not a daemon) and has not, if any.
  std::optional<Vpid> lost_participant(const FenceTracker& tracker) const;
  // The lowest participant that is dead (or not a daemon) and never contributed.
  std::optional<Vpid> dead_participant(const FenceTracker& tracker) const;
  void repair_fences(TimeNs now, bool returned, Outbox& out);
  // A fence release was delivered here: the fence it names ends.
  void release_delivered(const SharedBytes& release, Outbox& out);
  void end_fence(const FenceKey& key, FenceStatus status, Vpid lost, SharedBytes release,
                 Outbox& out);
  // A fence frame of the other shape (grpcomm_fence_topology differs).
  void refuse_fence_shape(const FrameHeader& header, Outbox& out);

  // bruck_fence.cc: the fence as a Bruck exchange among the participants' daemons.
  void bruck_contribute(TimeNs now, FenceRequest request, Outbox& out);
  void on_bruck_round(TimeNs now, const FrameHeader& header, const SharedBytes& payload,
                      Outbox& out);
  // A frame of this round's exchange, decoded: taken, kept for later or dropped.
  void bruck_take(const FenceKey& key, BruckOp& op, BruckOp::Early frame, Outbox& out);
  // Starts the run of the current epoch: members, then the frames that waited for it.
  void bruck_start_run(const FenceKey& key, BruckOp& op, Outbox& out);
  // Sends every round it can, and ends the round once every round was heard.
  void bruck_progress(const FenceKey& key, BruckOp& op, Outbox& out);
  void bruck_send_round(const FenceKey& key, BruckOp& op, std::uint32_t round, Outbox& out);
  void bruck_finish(const FenceKey& key, BruckOp& op, Outbox& out);
  // After a change of the view: every exchange not ended starts a new run,
  // and an ended one whose frames of the new epoch waited rejoins.
  void repair_bruck(Outbox& out);
  Status check_bruck() const;

  EngineConfig config_;
  Membership membership_;
  TopologyState topologies_[2];
  FenceTable fences_;
  Accounting accounting_;
  EngineStats stats_;
  bool radix_noop_shown_ = false;
  // The newest return this daemon has repaired for (repair_all compares).
  std::uint64_t repaired_return_epoch_ = 0;
  std::vector<Vpid> renewed_;  // repair_all's: who came back or joined since the last
  std::vector<std::pair<TopologyKind, std::uint64_t>> touched_;  // track_touched_ops
  std::vector<std::uint64_t> repair_ids_;  // repair_ops()'s scratch, kept to reuse
  // Fence rounds as Bruck exchanges (grpcomm_fence_topology bruck): open
  // ones, and the newest ended one of each signature, kept to rejoin a run
  // that a death started after it ended here.
  std::map<FenceKey, BruckOp> bruck_;
  // Acks of fence releases waiting to share a frame (ack_delay_ns), by
  // topology and requester. Each is what an immediate ack would have been,
  // made then (header, slot, path), only later on the wire: to the receiver
  // a delayed frame, which the protocol already takes from any network.
  struct AckBatch {
    FrameHeader header;  // the first op's ack, as made
    std::uint32_t slot = 0;
    SendPath path = SendPath::direct;
    std::vector<std::uint64_t> more;  // the other ops, in the order acked
  };
  std::vector<std::pair<std::pair<TopologyKind, Vpid>, AckBatch>> ack_batches_;
  bool ack_timer_armed_ = false;
  TimeNs acks_waiting_since_ = 0;  // when the oldest waiting ack was made
  Status check_op(const TopologyState& state, std::uint64_t id, const XcastOp& op) const;
  Status check_tables() const;
};

}  // namespace grove
