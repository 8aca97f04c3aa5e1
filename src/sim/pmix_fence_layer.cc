#include "sim/pmix_fence_layer.h"

namespace grove {

namespace {

constexpr std::uint32_t kSimJob = 1;

std::string daemon_name(Vpid daemon) {
  return "d" + std::to_string(daemon);
}

}  // namespace

SimPmixFences::SimPmixFences(std::uint32_t daemons, const std::string& nspace,
                             std::uint64_t max_payload)
    : nspace_(nspace), signature_(pmix_fence_signature(nspace, {})) {
  books_.reserve(daemons);
  for (Vpid daemon = 0; daemon < daemons; ++daemon)
    books_.emplace_back(daemon, max_payload);
}

std::optional<FenceRequest> SimPmixFences::enter(Vpid daemon, std::uint64_t round,
                                                 FenceRequest request) {
  contributed_[round][daemon] = request.data;
  PmixFenceBook::Call call;
  call.jobs.push_back({kSimJob, nspace_, {}});
  call.hosts = std::move(request.participants);
  call.data = std::move(request.data);
  call.placed_epoch = request.placed_epoch;
  PmixFenceBook::Begun begun = books_[daemon].begin(std::move(call), round);
  open_.emplace(std::pair{daemon, begun.id}, round);
  std::optional<FenceRequest> contribute;
  for (pmix_fence::Effect& effect : begun.outbox) {
    if (auto* step = std::get_if<pmix_fence::Contribute>(&effect))
      contribute = std::move(step->request);
  }
  return contribute;
}

Status SimPmixFences::fence_done(Vpid daemon, const FenceDone& done) {
  for (const pmix_fence::Effect& effect : books_[daemon].fence_done(done)) {
    const auto* answer = std::get_if<pmix_fence::Answer>(&effect);
    if (answer == nullptr) continue;
    if (Status checked = check(daemon, *answer, done); !checked) return checked;
  }
  return Ok{};
}

Status SimPmixFences::check(Vpid daemon, const pmix_fence::Answer& answer, const FenceDone& done) {
  auto call = open_.find({daemon, answer.id});
  if (call == open_.end()) {
    return Error{daemon_name(daemon) + " answered PMIx fence " + std::to_string(answer.id) +
                 " twice, or one its ranks never entered"};
  }
  const std::uint64_t round = call->second;
  open_.erase(call);
  if (round != done.key.generation) {
    return Error{daemon_name(daemon) + " answered its round " + std::to_string(round) +
                 " call with round " + std::to_string(done.key.generation) + "'s end"};
  }
  if (done.status != FenceStatus::ok) {
    if (answer.outcome != pmix_fence::Outcome::unreachable &&
        answer.outcome != pmix_fence::Outcome::too_large) {
      return Error{daemon_name(daemon) + " answered a failed round as if it were released"};
    }
    ++failed_;
    return Ok{};
  }
  if (answer.outcome != pmix_fence::Outcome::released)
    return Error{daemon_name(daemon) + " failed a released round " + std::to_string(round)};
  Bytes expected;
  for (const auto& [vpid, data] : contributed_[round]) {
    if (vpid != daemon) expected.insert(expected.end(), data.begin(), data.end());
  }
  if (answer.aggregate != expected) {
    return Error{daemon_name(daemon) + "'s ranks got " + std::to_string(answer.aggregate.size()) +
                 " bytes from round " + std::to_string(round) + ", not the other daemons' " +
                 std::to_string(expected.size())};
  }
  ++released_;
  return Ok{};
}

Status SimPmixFences::finish(const std::vector<bool>& alive) const {
  for (const auto& [call, round] : open_) {
    if (alive[call.first]) {
      return Error{"hang: " + daemon_name(call.first) + "'s ranks still wait in PMIx fence round " +
                   std::to_string(round)};
    }
  }
  return Ok{};
}

}  // namespace grove
