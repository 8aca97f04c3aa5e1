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

// Whether to take a broadcast's data from `sender`: always. "Is the sender my
// parent?" cannot be answered during a repair of a derived tree, because the
// new parent may replay before this daemon has heard the notice; screening
// would discard the one message that releases it.
inline bool accepts_data_from(Vpid /*sender*/, std::optional<Vpid> /*my_parent*/) {
  return true;
}

// Whom a daemon answers when its subtree has the payload: everyone who asked
// and has not been answered, not whoever it now calls its parent. Answering a
// daemon that holds nothing costs nothing; not answering the asker hangs it.
inline std::vector<Vpid> ack_targets(const std::set<Vpid>& requesters,
                                     const std::set<Vpid>& answered) {
  std::vector<Vpid> out;
  for (Vpid requester : requesters) {
    if (answered.count(requester) == 0) out.push_back(requester);
  }
  return out;
}

// Which children get the payload now: every current child not yet sent to,
// immediately. Nobody defers to its own parent's replay; an op a child lacks
// is still in flight, so some holder is replaying it in this same pass.
inline std::vector<Vpid> forward_targets(const std::vector<Vpid>& children,
                                         const std::set<Vpid>& sent_to) {
  std::vector<Vpid> out;
  for (Vpid child : children) {
    if (sent_to.count(child) == 0) out.push_back(child);
  }
  return out;
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
