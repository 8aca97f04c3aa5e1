// The engine's fence bookkeeping, apart from the broadcast that releases
// fences: open rounds by (signature, generation), the last released round of
// every signature, and the scopes (a PMIx namespace's signatures) that have
// ended. Pure data; the protocol that moves contributions is in fence.cc.
//
// Bounded: a scope's signatures are forgotten when the scope ends (the job's
// cleanup), and the ended scopes themselves are kept only as a window of the
// newest kRetiredScopes, enough for a straggling rollup or release of a job
// that just ended to be recognised and dropped instead of opening a round
// that nothing would ever close.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "grpcomm/effects.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"

namespace grove {

// What a daemon that joins late starts from: every signature's last released
// round and the scopes that ended, as the controller knew them at the join.
struct FenceRounds {
  std::vector<std::pair<std::string, std::uint64_t>> released;
  std::vector<std::string> retired;  // oldest first
};

struct FenceTracker {
  VpidSet participants;
  std::uint64_t placed_epoch = UINT64_MAX;  // see FenceRollup
  std::map<Vpid, Bytes> contributions;
  bool local = false;  // this daemon contributed
  // The round's data cannot travel in one frame: it fails, and every daemon
  // that knows says so up the tree at once (waiting for the rest is moot).
  bool too_large = false;
  std::optional<Vpid> sent_parent;
  std::size_t sent_count = 0;   // contributions in the rollup sent to sent_parent
  bool sent_too_large = false;  // what was sent to sent_parent said too_large
  // Participants in this daemon's routing subtree, cached per tree version.
  std::uint64_t subtree_version = UINT64_MAX;
  std::vector<Vpid> subtree_participants;
  // subtree_participants before this index have all contributed (contributions
  // are never taken back, so it only moves forward until the cache is rebuilt).
  std::size_t subtree_heard = 0;
};

class FenceTable {
 public:
  static constexpr std::size_t kRetiredScopes = 1024;

  // The last released round of a signature (0: none yet, or its scope ended).
  std::uint64_t generation(const std::string& signature) const;
  // The last released round of every signature that starts with `scope`.
  std::vector<std::pair<std::string, std::uint64_t>> released_in_scope(
      const std::string& scope) const;
  // The round a contribution of this daemon joins now.
  FenceKey next_round(const std::string& signature) const {
    return FenceKey{signature, generation(signature) + 1};
  }
  // An open round, created if needed. Null if the round was released already
  // or its scope has ended: such a contribution or rollup is a straggler.
  FenceTracker* open(const FenceKey& key);
  FenceTracker* find(const FenceKey& key);

  // A release of `key` was delivered: records the round and closes it and
  // every older round of the signature this daemon did not contribute to
  // (one it did still waits for its own release, which was overtaken).
  // Returns whether this daemon contributed to `key` (it then owes its
  // caller a FenceDone).
  bool release(const FenceKey& key);

  // Every signature that starts with `scope` is forgotten, and later frames
  // for it are dropped (see the header comment for the bound).
  void end_scope(const std::string& scope);
  bool scope_ended(std::string_view signature) const;

  // The rounds a joiner starts from (the controller's), and the joiner's side.
  FenceRounds snapshot() const;
  void seed(const FenceRounds& rounds);

  std::size_t open_rounds() const { return open_.size(); }
  std::size_t known_signatures() const { return generations_.size(); }
  std::vector<FenceKey> open_keys() const;
  // The first open round this daemon did not contribute to (with
  // `local_too`, any open round) whose signature has a release at or after
  // it (an invariant says there is none), or null. The controller releases
  // in order, so no round of its own is ever overtaken there.
  const FenceKey* released_but_open(bool local_too = false) const;

 private:
  std::map<FenceKey, FenceTracker> open_;
  std::map<std::string, std::uint64_t> generations_;  // last released round
  // Newest at the back. A vector, not a deque: an empty deque allocates
  // half a kilobyte, once per engine (a million in the simulator).
  std::vector<std::string> retired_;
  std::set<std::string, std::less<>> retired_set_;
};

}  // namespace grove
