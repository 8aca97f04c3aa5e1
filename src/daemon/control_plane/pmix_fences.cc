#include "daemon/control_plane/pmix_fences.h"

#include <algorithm>

#include "grpcomm/messages.h"

namespace grove {

using pmix_fence::Answer;
using pmix_fence::ArmTimer;
using pmix_fence::Contribute;
using pmix_fence::Notice;
using pmix_fence::Outcome;
using pmix_fence::Participants;
using FenceOutbox = pmix_fence::Outbox;

std::string pmix_fence_scope(const std::string& nspace) {
  return "pmix:" + nspace + ":";
}

std::string pmix_fence_signature(const std::string& nspace,
                                 const std::vector<std::uint32_t>& ranks) {
  if (ranks.empty()) return pmix_fence_scope(nspace) + "*";
  std::string signature = pmix_fence_scope(nspace);
  VpidSet set = VpidSet::from_list(ranks);
  bool first = true;
  for (const VpidRange& range : set.ranges()) {
    if (!first) signature += ",";
    first = false;
    signature += std::to_string(range.first);
    if (range.last != range.first) signature += "-" + std::to_string(range.last);
  }
  return signature;
}

std::string PmixFenceBook::signature_of(const std::vector<Participants>& jobs) {
  std::string signature;
  for (const Participants& participants : jobs) {
    signature += (signature.empty() ? "" : "|") +
                 pmix_fence_signature(participants.nspace, participants.ranks);
  }
  return signature;
}

PmixFenceBook::Begun PmixFenceBook::begin(Call call, std::uint64_t round) {
  Begun begun;
  begun.id = next_id_++;
  Fence fence{signature_of(call.jobs), round, std::move(call.jobs)};
  for (const Participants& participants : fence.jobs) {
    if (waits_for_gone(participants.job, participants.ranks, fence.signature, round)) {
      begun.outbox.push_back(Notice{"fence " + fence.signature +
                                    " includes a rank that has exited: it cannot complete"});
      begun.outbox.push_back(Answer{begun.id, Outcome::rank_gone, {}});
      return begun;
    }
  }
  if (call.timeout_seconds > 0) {
    // libpmix times a fence out itself only while it waits for local ranks;
    // once the daemons have it, the timeout is theirs to keep.
    begun.outbox.push_back(
        ArmTimer{begun.id, static_cast<std::int64_t>(call.timeout_seconds) * 1000});
  }
  FenceRequest request{fence.signature, std::move(call.hosts), std::move(call.data),
                       call.placed_epoch};
  fences_.emplace(begun.id, std::move(fence));
  begun.outbox.push_back(Contribute{std::move(request)});
  return begun;
}

void PmixFenceBook::answer(std::uint64_t id, Outcome outcome, FenceOutbox& outbox,
                           Bytes aggregate) {
  // Each fence is answered once: later causes find it gone.
  if (fences_.erase(id) == 0) return;
  outbox.push_back(Answer{id, outcome, std::move(aggregate)});
}

FenceOutbox PmixFenceBook::timed_out(std::uint64_t id) {
  FenceOutbox outbox;
  auto fence = fences_.find(id);
  if (fence == fences_.end()) return outbox;
  outbox.push_back(
      Notice{"fence " + fence->second.signature + " timed out (PMIX_TIMEOUT)", /*problem=*/true});
  answer(id, Outcome::timed_out, outbox);
  return outbox;
}

Bytes PmixFenceBook::others_data(const FenceDone& done, bool& decoded) const {
  auto release = wire_decode<FenceReleaseView>(*done.release);  // views into done.release
  decoded = static_cast<bool>(release);
  if (!release) return {};
  // libpmix gets the other daemons' blobs only. Its own it holds already (it
  // collected them from its store), and libpmix 4.2 unpacks every blob it is
  // handed into its store again and never frees each rank's copy (see
  // docs/pmix.md, "What PMIx 4.2 taught us"): handing back the local ranks'
  // data cost a pass over them and their size in lost memory, every fence.
  // Nothing at all (one daemon) makes libpmix skip its store.
  std::size_t size = 0;
  for (const auto& [vpid, blob] : release->contributions)
    size += vpid == self_ ? 0 : blob.size();
  Bytes aggregate;
  aggregate.reserve(size);
  for (const auto& [vpid, blob] : release->contributions) {
    if (vpid != self_) aggregate.insert(aggregate.end(), blob.begin(), blob.end());
  }
  return aggregate;
}

FenceOutbox PmixFenceBook::fence_done(const FenceDone& done) {
  FenceOutbox outbox;
  // Every pending fence of this signature that joined this round or an older
  // one (there is none older: a round releases only after all before it).
  std::vector<std::uint64_t> answered;
  for (const auto& [id, fence] : fences_) {
    if (fence.signature == done.key.signature && fence.round <= done.key.generation)
      answered.push_back(id);
  }
  if (answered.empty()) return outbox;  // not a PMIx fence, or answered already
  const std::string round = done.key.signature + " round " + std::to_string(done.key.generation);
  Outcome outcome = Outcome::released;
  Bytes aggregate;
  if (done.status == FenceStatus::too_large) {
    outbox.push_back(Notice{"fence " + round +
                            " failed: its data does not fit in one frame "
                            "(rml_base_max_frame_size, " +
                            std::to_string(max_payload_) + " bytes)"});
    outcome = Outcome::too_large;
  } else if (done.status != FenceStatus::ok) {
    outbox.push_back(Notice{"fence " + round +
                            " ended: " + std::string(fence_status_name(done.status)) + " (daemon " +
                            std::to_string(done.lost) + ")"});
    outcome = Outcome::unreachable;
  } else {
    bool decoded = false;
    aggregate = others_data(done, decoded);
    if (!decoded) outcome = Outcome::undecodable;
  }
  for (std::size_t i = 0; i < answered.size(); ++i) {
    const bool last = i + 1 == answered.size();
    answer(answered[i], outcome, outbox, last ? std::move(aggregate) : aggregate);
  }
  return outbox;
}

bool PmixFenceBook::waits_for_gone(std::uint32_t job, const std::vector<std::uint32_t>& ranks,
                                   const std::string& signature, std::uint64_t round) const {
  auto gone = gone_.find(job);
  if (gone == gone_.end()) return false;
  for (const auto& [rank, released] : gone->second) {
    if (!ranks.empty() && !std::binary_search(ranks.begin(), ranks.end(), rank)) continue;
    // A round released where the rank lived had its part: it completes.
    auto last = released.find(signature);
    if (round > (last == released.end() ? 0 : last->second)) return true;
  }
  return false;
}

FenceOutbox PmixFenceBook::ranks_gone(std::uint32_t job, const std::vector<GoneRank>& ranks) {
  for (const GoneRank& rank : ranks) {
    auto& released = gone_[job][rank.rank];
    for (const auto& [signature, round] : rank.released)
      released[signature] = round;
  }
  FenceOutbox outbox;
  std::vector<std::uint64_t> doomed;
  for (const auto& [id, fence] : fences_) {
    for (const Participants& participants : fence.jobs) {
      if (participants.job == job &&
          waits_for_gone(job, participants.ranks, fence.signature, fence.round)) {
        doomed.push_back(id);
        break;
      }
    }
  }
  for (std::uint64_t id : doomed) {
    outbox.push_back(Notice{"fence " + fences_.at(id).signature +
                            " includes a rank that has exited: it cannot complete"});
    answer(id, Outcome::rank_gone, outbox);
  }
  return outbox;
}

FenceOutbox PmixFenceBook::job_ended(std::uint32_t job, const std::string& nspace) {
  FenceOutbox outbox;
  std::vector<std::uint64_t> ended;
  for (const auto& [id, fence] : fences_) {
    if (std::any_of(fence.jobs.begin(), fence.jobs.end(),
                    [&](const Participants& participants) { return participants.job == job; }))
      ended.push_back(id);
  }
  for (std::uint64_t id : ended) {
    const Fence& fence = fences_.at(id);
    if (fence.jobs.size() > 1) {  // another job's ranks wait in it
      outbox.push_back(Notice{"fence " + fence.signature + " includes " + nspace +
                              ", which has ended: it " + "cannot complete"});
    }
    answer(id, Outcome::job_ended, outbox);
  }
  gone_.erase(job);
  return outbox;
}

}  // namespace grove
