// The daemon set of a DVM as one daemon sees it: which vpids exist (holes are
// allowed), which have failed, which came back or joined and when, the
// recovery epoch the controller assigned last, and the tree version.
//
// Membership moves both ways: a failed daemon can return at its old vpid, and
// the daemon set can grow by vpids past its end (a join). A joined vpid is
// laid out after every other, so growing the set by daemons that are not yet
// alive changes no tree; a join is therefore the return of a vpid that was
// always there. Each return or join stamps the vpid's incarnation with its
// epoch; the newest such stamp is the return epoch, before which no ack may
// vouch for anything (docs/engine.md, rule 7).
//
// The tree version counts the departures and returns this daemon has learned
// of. It only ever grows, even when a return clears a failure: a popcount of
// the failed set would go down on a revival and make a daemon that had seen
// the revival read every peer that had not as being ahead of it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "util/result.h"

namespace grove {

using Vpid = std::uint32_t;
inline constexpr Vpid kControllerVpid = 0;
// No daemon set grows past this end (four times the largest DVM grove
// starts): a notice, a seed or a join naming more is refused, not allocated.
inline constexpr Vpid kMaxVpidEnd = Vpid{1} << 22;

enum class MembershipEventKind : std::uint8_t { departure, return_ };

// When a vpid last came back or joined (vpids never listed: present since the start).
struct Incarnation {
  Vpid vpid = 0;
  std::uint64_t epoch = 0;
  friend bool operator==(const Incarnation&, const Incarnation&) = default;
};

struct MembershipEvent {
  MembershipEventKind kind = MembershipEventKind::departure;
  Vpid vpid = 0;
  std::uint64_t epoch = 0;  // assigned by the controller, strictly increasing
};

// Position of vpid in a sorted daemon set, if it is a member. A set without
// holes (0..size-1, the usual DVM) is indexed directly: every frame asks, and
// a search of a million vpids costs cache misses.
std::optional<std::size_t> daemon_index(std::span<const Vpid> daemons, Vpid vpid);
// Whether a sorted daemon set starting at 0 is 0..size-1.
inline bool dense_daemon_set(std::span<const Vpid> daemons) {
  return !daemons.empty() && daemons.back() == daemons.size() - 1;
}

class Membership {
 public:
  // The daemon set must be non-empty, free of duplicates and contain the
  // controller (vpid 0). Order does not matter; it is kept sorted.
  static Result<Membership> create(std::vector<Vpid> daemons);

  // Applies an event from the controller. An event whose epoch is not newer
  // than the current one is stale and ignored. A return of a vpid past the
  // end of the daemon set is a join: the set grows to it, and any vpid
  // skipped on the way is failed (a vpid at or past kMaxVpidEnd is refused).
  // Returns whether the view changed (and so the tree version advanced).
  bool apply(const MembershipEvent& event);

  // Adopts the controller's complete view at an epoch: the failed set, the end
  // of the daemon set (one past its highest vpid; a smaller end changes
  // nothing, one past kMaxVpidEnd refuses the view) and every incarnation
  // (one newer than `epoch` refuses it: no ack could ever vouch after it). Notices carry the whole
  // view, so a daemon that misses or reorders one still converges. Stale epochs are ignored. The
  // tree version grows by the departures and the returns this learns of (a return is an incarnation
  // newer than the one known). Returns whether the view changed.
  //
  // `tree_version`, when not 0, is the controller's count at that epoch and
  // is taken as it is: counts that depend on which notices a daemon happened
  // to see (a departure and a return seen apart count two, seen at once
  // none) would disagree, and an op parked until its sender's count would
  // wait for ever at a daemon that counts lower.
  bool adopt(std::uint64_t epoch, std::span<const Vpid> failed, Vpid vpid_end = 0,
             std::span<const Incarnation> incarnations = {}, std::uint64_t tree_version = 0);

  std::span<const Vpid> daemons() const { return *daemons_; }
  // The daemon set is immutable and shared between copies (a simulator holds thousands).
  const std::shared_ptr<const std::vector<Vpid>>& shared_daemons() const { return daemons_; }
  std::size_t size() const { return daemons_->size(); }
  // Position of vpid in the sorted daemon set, if it is a member.
  std::optional<std::size_t> index_of(Vpid vpid) const;
  bool contains(Vpid vpid) const { return index_of(vpid).has_value(); }
  // Whether the daemon set is 0..size-1, every vpid its own index.
  bool dense() const { return dense_daemon_set(*daemons_); }
  bool is_failed(Vpid vpid) const;
  bool is_failed_index(std::size_t index) const;
  // The failed set as sorted daemon indices (cheap to compare and key on).
  const std::vector<std::uint32_t>& failed_indices() const { return failed_indices_; }
  bool is_alive(Vpid vpid) const { return contains(vpid) && !is_failed(vpid); }
  std::vector<Vpid> failed() const;
  std::size_t alive_count() const { return daemons_->size() - failed_indices_.size(); }

  std::uint64_t epoch() const { return epoch_; }
  std::uint64_t tree_version() const { return tree_version_; }
  // One past the highest vpid of the daemon set.
  Vpid vpid_end() const { return daemons_->back() + 1; }
  // Sorted by vpid: every vpid that came back or joined, with the epoch it did.
  const std::vector<Incarnation>& incarnations() const { return incarnations_; }
  // The epoch vpid last came back or joined in (0: present since the start).
  std::uint64_t incarnation(Vpid vpid) const;
  // The newest incarnation's epoch (0: no daemon ever came back or joined).
  std::uint64_t return_epoch() const { return return_epoch_; }

 private:
  explicit Membership(std::vector<Vpid> daemons);
  // Grows the daemon set to `end` (a new shared vector: copies keep theirs).
  // Returns the vpids added.
  std::vector<Vpid> grow_to(Vpid end);
  // Records vpid's incarnation at `epoch`; returns whether it is newer.
  bool set_incarnation(Vpid vpid, std::uint64_t epoch);

  std::shared_ptr<const std::vector<Vpid>> daemons_;  // sorted
  // Sorted indices into daemons_ of the failed daemons. A list, not a bitmap:
  // failures are few, and a bitmap made every copy (one per engine in the
  // simulator) and every adopt cost the daemon count, not the failure count.
  std::vector<std::uint32_t> failed_indices_;
  std::vector<Incarnation> incarnations_;  // sorted by vpid
  std::uint64_t epoch_ = 0;
  std::uint64_t tree_version_ = 0;
  std::uint64_t return_epoch_ = 0;
};

}  // namespace grove
