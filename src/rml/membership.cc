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

std::uint64_t Membership::incarnation(Vpid vpid) const {
  auto at = std::lower_bound(incarnations_.begin(), incarnations_.end(), vpid,
                             [](const Incarnation& entry, Vpid key) { return entry.vpid < key; });
  return at != incarnations_.end() && at->vpid == vpid ? at->epoch : 0;
}

bool Membership::set_incarnation(Vpid vpid, std::uint64_t epoch) {
  auto at = std::lower_bound(incarnations_.begin(), incarnations_.end(), vpid,
                             [](const Incarnation& entry, Vpid key) { return entry.vpid < key; });
  if (at != incarnations_.end() && at->vpid == vpid) {
    if (epoch <= at->epoch) return false;
    at->epoch = epoch;
  } else {
    incarnations_.insert(at, Incarnation{vpid, epoch});
  }
  return_epoch_ = std::max(return_epoch_, epoch);
  return true;
}

std::vector<Vpid> Membership::grow_to(Vpid end) {
  std::vector<Vpid> added;
  if (end <= vpid_end()) return added;
  auto grown = std::make_shared<std::vector<Vpid>>(*daemons_);
  for (Vpid vpid = vpid_end(); vpid < end; ++vpid) {
    grown->push_back(vpid);
    added.push_back(vpid);
  }
  daemons_ = std::move(grown);
  return added;
}

bool Membership::apply(const MembershipEvent& event) {
  if (event.epoch <= epoch_) return false;  // stale: already adopted a newer view
  if (event.vpid >= kMaxVpidEnd) return false;
  epoch_ = event.epoch;
  // The controller never departs or returns while its DVM lives.
  if (event.vpid == kControllerVpid) return false;
  if (event.kind == MembershipEventKind::return_ && event.vpid >= vpid_end()) {
    // A join: the vpids skipped on the way were never started.
    const Vpid old_end = vpid_end();
    grow_to(event.vpid + 1);
    for (Vpid vpid = old_end; vpid < event.vpid; ++vpid)
      failed_indices_.push_back(static_cast<std::uint32_t>(*index_of(vpid)));
  }
  auto index = index_of(event.vpid);
  if (!index) return false;
  const bool want_failed = event.kind == MembershipEventKind::departure;
  const auto position = static_cast<std::uint32_t>(*index);
  auto at = std::lower_bound(failed_indices_.begin(), failed_indices_.end(), position);
  const bool failed = at != failed_indices_.end() && *at == position;
  bool changed = false;
  if (failed != want_failed) {
    if (want_failed) {
      failed_indices_.insert(at, position);
    } else {
      failed_indices_.erase(at);
    }
    changed = true;
  }
  // A return is news even for a vpid this daemon never heard had died: the
  // process at that vpid is a new one.
  if (!want_failed && set_incarnation(event.vpid, event.epoch)) changed = true;
  if (changed) ++tree_version_;
  return changed;
}

bool Membership::adopt(std::uint64_t epoch, std::span<const Vpid> failed, Vpid vpid_end,
                       std::span<const Incarnation> incarnations, std::uint64_t tree_version) {
  if (epoch <= epoch_ || vpid_end > kMaxVpidEnd) return false;
  for (const Incarnation& entry : incarnations) {
    if (entry.epoch > epoch) return false;  // from the future: a malformed view
  }
  epoch_ = epoch;
  const std::size_t old_size = daemons_->size();
  grow_to(vpid_end);
  std::vector<std::uint32_t> wanted;
  wanted.reserve(failed.size());
  for (Vpid vpid : failed) {
    auto index = index_of(vpid);
    if (index && vpid != kControllerVpid) wanted.push_back(static_cast<std::uint32_t>(*index));
  }
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  // The tree version grows by the departures plus the returns: the size of
  // the symmetric difference between the old and the new failed set (a vpid
  // the set just grew by was never alive here, so its being failed is no
  // departure), plus every incarnation newer than the one known.
  std::uint64_t changes = 0;
  auto old_it = failed_indices_.begin();
  auto new_it = wanted.begin();
  while (old_it != failed_indices_.end() || new_it != wanted.end()) {
    if (new_it == wanted.end() || (old_it != failed_indices_.end() && *old_it < *new_it)) {
      ++changes, ++old_it;  // a return
    } else if (old_it == failed_indices_.end() || *new_it < *old_it) {
      if (*new_it < old_size) ++changes;  // a departure
      ++new_it;
    } else {
      ++old_it, ++new_it;
    }
  }
  for (const Incarnation& entry : incarnations) {
    if (entry.vpid != kControllerVpid && index_of(entry.vpid) &&
        set_incarnation(entry.vpid, entry.epoch))
      ++changes;
  }
  const bool grew = daemons_->size() != old_size;
  failed_indices_ = std::move(wanted);
  tree_version_ =
      tree_version != 0 ? std::max(tree_version_, tree_version) : tree_version_ + changes;
  return changes != 0 || grew;
}

}  // namespace grove
