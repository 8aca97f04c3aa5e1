// The daemon set of a DVM as one daemon sees it: which vpids exist (holes are
// allowed: an elastic shrink leaves them), which have failed, the recovery
// epoch the controller assigned last, and the tree version.
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

enum class MembershipEventKind : std::uint8_t { departure, return_ };

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
  // than the current one is stale and ignored. Returns whether the failed set
  // changed (and so the tree version advanced).
  bool apply(const MembershipEvent& event);

  // Adopts the controller's complete failed set at an epoch (notices carry the
  // whole set, so a daemon that misses or reorders one still converges). Stale
  // epochs are ignored. The tree version grows by the number of departures and
  // returns this learns of. Returns whether the failed set changed.
  bool adopt(std::uint64_t epoch, std::span<const Vpid> failed);

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

 private:
  explicit Membership(std::vector<Vpid> daemons);

  std::shared_ptr<const std::vector<Vpid>> daemons_;  // sorted
  // Sorted indices into daemons_ of the failed daemons. A list, not a bitmap:
  // failures are few, and a bitmap made every copy (one per engine in the
  // simulator) and every adopt cost the daemon count, not the failure count.
  std::vector<std::uint32_t> failed_indices_;
  std::uint64_t epoch_ = 0;
  std::uint64_t tree_version_ = 0;
};

}  // namespace grove
