#include "rml/membership.h"

#include <algorithm>

namespace grove {

Membership::Membership(std::vector<Vpid> daemons)
    : daemons_(std::make_shared<const std::vector<Vpid>>(std::move(daemons))) {}

Result<Membership> Membership::create(std::vector<Vpid> daemons) {
  if (daemons.empty()) return Error{"a DVM needs at least one daemon"};
  std::sort(daemons.begin(), daemons.end());
  if (std::adjacent_find(daemons.begin(), daemons.end()) != daemons.end()) {
    return Error{"the daemon set lists a vpid twice"};
  }
  if (daemons.front() != kControllerVpid) {
    return Error{"the daemon set must contain the controller, vpid 0"};
  }
  return Membership(std::move(daemons));
}

std::optional<std::size_t> daemon_index(std::span<const Vpid> daemons, Vpid vpid) {
  if (dense_daemon_set(daemons)) {
    if (vpid < daemons.size()) return std::size_t{vpid};
    return std::nullopt;
  }
  auto found = std::lower_bound(daemons.begin(), daemons.end(), vpid);
  if (found == daemons.end() || *found != vpid) return std::nullopt;
  return static_cast<std::size_t>(found - daemons.begin());
}

std::optional<std::size_t> Membership::index_of(Vpid vpid) const {
  return daemon_index(*daemons_, vpid);
}

bool Membership::is_failed_index(std::size_t index) const {
  return std::binary_search(failed_indices_.begin(), failed_indices_.end(),
                            static_cast<std::uint32_t>(index));
}

bool Membership::is_failed(Vpid vpid) const {
  auto index = index_of(vpid);
  return index && is_failed_index(*index);
}

std::vector<Vpid> Membership::failed() const {
  std::vector<Vpid> out;
  out.reserve(failed_indices_.size());
  for (std::uint32_t index : failed_indices_)
    out.push_back((*daemons_)[index]);
  return out;
}

bool Membership::apply(const MembershipEvent& event) {
  if (event.epoch <= epoch_) return false;  // stale: already adopted a newer view
  epoch_ = event.epoch;
  auto index = index_of(event.vpid);
  // The controller never departs while its DVM lives; a notice naming it is ignored.
  if (!index || event.vpid == kControllerVpid) return false;
  const bool want_failed = event.kind == MembershipEventKind::departure;
  const auto position = static_cast<std::uint32_t>(*index);
  auto at = std::lower_bound(failed_indices_.begin(), failed_indices_.end(), position);
  const bool failed = at != failed_indices_.end() && *at == position;
  if (failed == want_failed) return false;
  if (want_failed) {
    failed_indices_.insert(at, position);
  } else {
    failed_indices_.erase(at);
  }
  ++tree_version_;
  return true;
}

bool Membership::adopt(std::uint64_t epoch, std::span<const Vpid> failed) {
  if (epoch <= epoch_) return false;
  epoch_ = epoch;
  std::vector<std::uint32_t> wanted;
  wanted.reserve(failed.size());
  for (Vpid vpid : failed) {
    auto index = index_of(vpid);
    if (index && vpid != kControllerVpid) wanted.push_back(static_cast<std::uint32_t>(*index));
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  // The tree version grows by the departures plus the returns: the size of
  // the symmetric difference between the old and the new failed set.
  std::uint64_t changes = 0;
  auto old_it = failed_indices_.begin();
  auto new_it = wanted.begin();
  while (old_it != failed_indices_.end() || new_it != wanted.end()) {
    if (new_it == wanted.end() || (old_it != failed_indices_.end() && *old_it < *new_it)) {
      ++changes, ++old_it;  // a return
    } else if (old_it == failed_indices_.end() || *new_it < *old_it) {
      ++changes, ++new_it;  // a departure
    } else {
      ++old_it, ++new_it;
    }
  }
  failed_indices_ = std::move(wanted);
  tree_version_ += changes;
  return changes != 0;
}

}  // namespace grove
