#include "daemon/control_plane/pmix_collectives.h"

#include <algorithm>

#include "grpcomm/messages.h"

namespace grove {

using pmix_collective::Answer;
using pmix_collective::Contribute;
using pmix_collective::Notice;
using pmix_collective::Outcome;
using pmix_collective::RegisterThenAnswer;
using CollectiveOutbox = pmix_collective::Outbox;

namespace {

// A daemon's candidate for a group's context id. Every daemon offers one;
// the lowest-numbered participating daemon's wins on all of them. Unique
// DVM-wide: the daemon's vpid above a count it never repeats.
struct GroupContextOffer {
  std::uint64_t candidate = 0;

  static constexpr const char* wire_name = "group context offer";
  static auto wire_fields(auto& m) { return std::tie(m.candidate); }
};

// The agreed context id: the first offer in the release (contributions come
// by vpid ascending), or nothing if the release carries none.
std::optional<std::uint64_t> agreed_context_id(const FenceDone& done) {
  if (!done.release) return std::nullopt;
  auto release = wire_decode<FenceReleaseView>(*done.release);
  if (!release) return std::nullopt;
  for (const auto& [vpid, bytes] : release->contributions) {
    if (auto offer = wire_decode<GroupContextOffer>(bytes)) return offer->candidate;
  }
  return std::nullopt;
}

}  // namespace

std::string PmixCollectiveBook::signature_of(const std::string& kind,
                                             const std::vector<pmix_fence::Participants>& jobs) {
  std::string signature = pmix_fence_scope(jobs.front().nspace) + kind;
  for (const pmix_fence::Participants& participants : jobs)
    signature += "|" + pmix_fence_signature(participants.nspace, participants.ranks);
  return signature;
}

std::vector<std::string> PmixCollectiveBook::nspaces_of(const Pending& pending) {
  std::vector<std::string> nspaces;
  for (const pmix_fence::Participants& participants : pending.jobs)
    nspaces.push_back(participants.nspace);
  return nspaces;
}

bool PmixCollectiveBook::waits_for_gone(const Pending& pending, const std::string& signature,
                                        const PmixFenceBook& gone) {
  return std::any_of(pending.jobs.begin(), pending.jobs.end(), [&](const auto& participants) {
    return gone.waits_for_gone(participants.job, participants.ranks, signature, pending.round);
  });
}

PmixCollectiveBook::Begun PmixCollectiveBook::begin(Call call, std::uint64_t round,
                                                    const PmixFenceBook& gone) {
  Begun begun;
  begun.id = next_id_++;
  const std::string signature = signature_of(call.kind, call.jobs);
  if (call.timeout_seconds > 0) {
    // libpmix 4.2 arms a timer of its own for a connect or group with
    // PMIX_TIMEOUT and never cancels it: when it fires, even after the
    // operation completed, its progress thread spins (docs/pmix.md).
    begun.outbox.push_back(Notice{"PMIx " + call.kind + " carries PMIX_TIMEOUT (" +
                                  std::to_string(call.timeout_seconds) +
                                  " s): libpmix 4.2 mishandles it once it expires"});
  }
  Pending pending{begun.id, round, call.registers, call.wants_context_id, std::move(call.jobs)};
  if (waits_for_gone(pending, signature, gone)) {
    begun.outbox.push_back(
        Notice{"PMIx " + signature + " includes a rank that has exited: it cannot complete"});
    begun.outbox.emplace_back(std::in_place_type<Answer>, begun.id, Outcome::rank_gone, 0);
    return begun;
  }
  Bytes offer;
  if (pending.wants_context_id)
    offer = encode(GroupContextOffer{(static_cast<std::uint64_t>(self_) << 32) | ++offers_});
  pending_.emplace(signature, std::move(pending));
  begun.outbox.push_back(
      Contribute{FenceRequest{signature, std::move(call.hosts), std::move(offer)}});
  return begun;
}

CollectiveOutbox PmixCollectiveBook::collective_done(const FenceDone& done) {
  CollectiveOutbox outbox;
  auto [first, last] = pending_.equal_range(done.key.signature);
  std::vector<Pending> ended;
  for (auto entry = first; entry != last;) {
    if (entry->second.round > done.key.generation) {
      ++entry;
      continue;
    }
    ended.push_back(std::move(entry->second));
    entry = pending_.erase(entry);
  }
  for (Pending& pending : ended) {
    if (done.status != FenceStatus::ok) {
      outbox.push_back(Notice{"PMIx " + done.key.signature +
                              " ended: " + std::string(fence_status_name(done.status)) +
                              " (daemon " + std::to_string(done.lost) + ")"});
      outbox.emplace_back(std::in_place_type<Answer>, pending.id, Outcome::unreachable, 0);
      continue;
    }
    std::optional<std::uint64_t> context_id;
    if (pending.wants_context_id) {
      context_id = agreed_context_id(done);
      if (!context_id) {
        outbox.push_back(Notice{"PMIx " + done.key.signature + ": no daemon offered a context id"});
        outbox.emplace_back(std::in_place_type<Answer>, pending.id, Outcome::no_context, 0);
        continue;
      }
    }
    if (!pending.registers) {
      outbox.emplace_back(std::in_place_type<Answer>, pending.id, Outcome::done,
                          context_id.value_or(0));
      continue;
    }
    outbox.push_back(RegisterThenAnswer{pending.id, context_id.value_or(0), nspaces_of(pending),
                                        done.key.signature});
  }
  return outbox;
}

CollectiveOutbox PmixCollectiveBook::ranks_gone(const PmixFenceBook& gone) {
  CollectiveOutbox outbox;
  for (auto entry = pending_.begin(); entry != pending_.end();) {
    if (!waits_for_gone(entry->second, entry->first, gone)) {
      ++entry;
      continue;
    }
    outbox.push_back(
        Notice{"PMIx " + entry->first + " includes a rank that has exited: it cannot complete"});
    outbox.emplace_back(std::in_place_type<Answer>, entry->second.id, Outcome::rank_gone, 0);
    entry = pending_.erase(entry);
  }
  return outbox;
}

CollectiveOutbox PmixCollectiveBook::job_ended(const std::string& nspace) {
  CollectiveOutbox outbox;
  for (auto entry = pending_.begin(); entry != pending_.end();) {
    const std::vector<std::string> nspaces = nspaces_of(entry->second);
    if (std::find(nspaces.begin(), nspaces.end(), nspace) == nspaces.end()) {
      ++entry;
      continue;
    }
    if (nspaces.size() > 1) {  // another job's ranks wait in it
      outbox.push_back(Notice{"PMIx " + entry->first + " includes " + nspace +
                              ", which has ended: it cannot complete"});
    }
    outbox.emplace_back(std::in_place_type<Answer>, entry->second.id, Outcome::job_ended, 0);
    entry = pending_.erase(entry);
  }
  return outbox;
}

}  // namespace grove
