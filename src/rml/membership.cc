#include "rml/membership.h"

#include <algorithm>

namespace grove {

Membership::Membership(std::vector<Vpid> daemons)
    : daemons_(std::make_shared<const std::vector<Vpid>>(std::move(daemons))),
      failed_words_((daemons_->size() + 63) / 64, 0) {}

void Membership::set_failed_index(std::size_t index, bool failed) {
  const std::uint64_t bit = std::uint64_t{1} << (index % 64);
  if (failed) {
    failed_words_[index / 64] |= bit;
  } else {
    failed_words_[index / 64] &= ~bit;
  }
}

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
  auto found = std::lower_bound(daemons_->begin(), daemons_->end(), vpid);
  if (found == daemons_->end() || *found != vpid) return std::nullopt;
  return static_cast<std::size_t>(found - daemons_->begin());
}

bool Membership::is_failed(Vpid vpid) const {
  auto index = index_of(vpid);
  return index && is_failed_index(*index);
}

std::vector<Vpid> Membership::failed() const {
  std::vector<Vpid> out;
  for (std::size_t word = 0; word < failed_words_.size(); ++word) {
    for (std::uint64_t bits = failed_words_[word]; bits != 0; bits &= bits - 1) {
      out.push_back((*daemons_)[word * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))]);
    }
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
  if (is_failed_index(*index) == want_failed) return false;
  set_failed_index(*index, want_failed);
  if (want_failed) {
    ++failed_count_;
  } else {
    --failed_count_;
  }
  ++tree_version_;
  return true;
}

bool Membership::adopt(std::uint64_t epoch, std::span<const Vpid> failed) {
  if (epoch <= epoch_) return false;
  epoch_ = epoch;
  std::vector<std::uint64_t> wanted(failed_words_.size(), 0);
  for (Vpid vpid : failed) {
    auto index = index_of(vpid);
    if (index && vpid != kControllerVpid) wanted[*index / 64] |= std::uint64_t{1} << (*index % 64);
  }
  std::uint64_t changes = 0;
  for (std::size_t word = 0; word < wanted.size(); ++word) {
    changes += static_cast<std::uint64_t>(__builtin_popcountll(wanted[word] ^ failed_words_[word]));
  }
  failed_words_ = std::move(wanted);
  failed_count_ = 0;
  for (std::uint64_t word : failed_words_) {
    failed_count_ += static_cast<std::size_t>(__builtin_popcountll(word));
  }
  tree_version_ += changes;
  return changes != 0;
}

}  // namespace grove
