// The decisions a daemon makes about a broadcast while trees are being
// repaired, as small pure functions. Each one is the corrected form of a rule
// that hung a release in the seed's first implementation (8.7.2.6.1); the
// unit tests keep the naive form beside it and show where it fails.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "rml/membership.h"

namespace grove {

// The rules below, named, so a test can weaken one at a time (to its naive
// form, as the seed's first implementation had it) and show that the
// simulator's invariants catch it. Never set outside tests.
enum class RepairRule : std::uint8_t {
  accept_any_sender,    // property 2: no "is the sender my parent" screen
  replay_at_once,       // property 4: nobody defers a replay to its parent's
  park_when_behind,     // property 5: park what a newer view sent out of turn
  ack_names_subtree,    // an ack counts only for the subtree it was made for
  void_acks_on_return,  // rule 7: a return voids every ack made before it
  seed_joiners,         // a joiner or returner starts from the controller's rounds
  // The Bruck exchange (grpcomm/bruck_fence.cc):
  bruck_drop_stale,       // a frame of an older run is dropped whole, never merged
  bruck_restart,          // a new epoch starts a new run among its members
  bruck_rejoin,           // a daemon that ended the round rejoins a later run
  bruck_carry_outsiders,  // contributions of non-members travel in every frame
};

// A set of weakened rules (empty: the engine as it runs).
struct RepairRules {
  std::uint32_t bits = 0;
  bool has(RepairRule rule) const { return (bits >> static_cast<unsigned>(rule)) & 1U; }
  RepairRules& add(RepairRule rule) {
    bits |= 1U << static_cast<unsigned>(rule);
    return *this;
  }
};

// Whom a daemon answers when its subtree has the payload: everyone who asked
// and has not been answered, not whoever it now calls its parent. Answering a
// daemon that holds nothing costs nothing; not answering the asker hangs it.
// `requesters` and `answered` are any ordered sets of vpids.
// The engine visits them (no list built per ack); `visit` may change `answered`.
template <typename Requesters, typename Answered, typename Visit>
void visit_ack_targets(const Requesters& requesters, const Answered& answered, Visit visit) {
  for (Vpid requester : requesters) {
    if (answered.count(requester) == 0) visit(requester);
  }
}
template <typename Requesters = std::set<Vpid>, typename Answered = Requesters>
std::vector<Vpid> ack_targets(const Requesters& requesters, const Answered& answered) {
  std::vector<Vpid> out;
  visit_ack_targets(requesters, answered, [&](Vpid requester) { out.push_back(requester); });
  return out;
}

// Which children get the payload now: every current child not yet sent to,
// immediately. Nobody defers to its own parent's replay; an op a child lacks
// is still in flight, so some holder is replaying it in this same pass.
// `sent_to` is any set or map keyed by vpid.
// The engine visits them; `visit` may change `sent_to`.
template <typename SentTo, typename Visit>
void visit_forward_targets(const std::vector<Vpid>& children, const SentTo& sent_to, Visit visit) {
  for (Vpid child : children) {
    if (sent_to.count(child) == 0) visit(child);
  }
}
template <typename SentTo = std::set<Vpid>>
std::vector<Vpid> forward_targets(const std::vector<Vpid>& children, const SentTo& sent_to) {
  std::vector<Vpid> out;
  visit_forward_targets(children, sent_to, [&](Vpid child) { out.push_back(child); });
  return out;
}

// What an acknowledgement vouches for: "every living daemon of the subtree
// under `slot`, in the tree of membership `epoch`, has the payload".
struct AckStamp {
  std::uint64_t epoch = 0;
  std::uint32_t slot = 0;
};

// Whether a child's acknowledgement counts toward this daemon's own, now that
// this daemon is at `my_epoch`, the newest return or join it knows of was in
// `return_epoch`, and the child sits in `child_slot`. The ack must not come
// from a later epoch (kept aside until this daemon gets there), and the child
// must have made it from the slot it holds now. While daemons only fail, a
// daemon only ever moves up its own ancestor chain, so a slot's subtree can
// only lose members: an ack made from the same slot in an earlier epoch
// covers the subtree counted on now. An ack made from another slot covers
// another subtree: a daemon that has not heard of its promotion answers from
// its old place (a leaf there, say) while its repaired parent counts on it for
// the larger subtree of the new one; it answers again once it hears.
// A return or a join moves members down again (the returner takes back its
// slot, whoever stood in for it goes home) and adds a member that holds
// nothing, so no ack made before the newest return vouches for anything.
inline bool ack_vouches(const AckStamp& ack, std::uint64_t my_epoch, std::uint64_t return_epoch,
                        std::optional<std::uint32_t> child_slot) {
  return return_epoch <= ack.epoch && ack.epoch <= my_epoch && child_slot == ack.slot;
}

// Whether to park an op instead of deriving children for it: the sender has
// seen more departures and returns than this daemon, and it is not this
// daemon's parent (concrete evidence that the two views disagree). Ordinary
// traffic comes from the parent and is never parked.
inline bool must_park(std::uint64_t sender_tree_version, std::uint64_t my_tree_version, Vpid sender,
                      std::optional<Vpid> my_parent) {
  return sender_tree_version > my_tree_version && my_parent != sender;
}

}  // namespace grove
