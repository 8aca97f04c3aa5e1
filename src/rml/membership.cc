#include "rml/membership.h"

#include <algorithm>

namespace grove {

Membership::Membership(std::vector<Vpid> daemons)
    : daemons_(std::move(daemons)), failed_(daemons_.size(), false) {}

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

std::optional<std::size_t> Membership::index_of(Vpid vpid) const {
  auto found = std::lower_bound(daemons_.begin(), daemons_.end(), vpid);
  if (found == daemons_.end() || *found != vpid) return std::nullopt;
  return static_cast<std::size_t>(found - daemons_.begin());
}

bool Membership::is_failed(Vpid vpid) const {
  auto index = index_of(vpid);
  return index && failed_[*index];
}

std::vector<Vpid> Membership::failed() const {
  std::vector<Vpid> out;
  for (std::size_t i = 0; i < daemons_.size(); ++i) {
    if (failed_[i]) out.push_back(daemons_[i]);
  }
  return out;
}

bool Membership::apply(const MembershipEvent& event) {
  if (event.epoch <= epoch_) return false;  // stale: already adopted a newer view
  epoch_ = event.epoch;
  auto index = index_of(event.vpid);
  // The controller never departs while its DVM lives; a notice naming it is ignored.
  if (!index || event.vpid == kControllerVpid) return false;
  bool want_failed = event.kind == MembershipEventKind::departure;
  if (failed_[*index] == want_failed) return false;
  failed_[*index] = want_failed;
  if (want_failed) {
    ++failed_count_;
  } else {
    --failed_count_;
  }
  ++tree_version_;
  return true;
}

}  // namespace grove
