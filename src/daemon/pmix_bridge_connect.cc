// The PMIx collectives over sets of processes that may span jobs:
// PMIx_Connect and PMIx_Disconnect (what MPI_Comm_spawn,
// MPI_Comm_connect/accept and MPI_Comm_disconnect use) and process groups
// (PMIx_Group_construct and _destruct). Each is a collective over the engine
// among the daemons hosting the participants, like a fence. Before a connect
// or a group construct is answered, every participating job is registered
// with this daemon's PMIx server, so libpmix can hand its local participants
// the others' job data.
#include "daemon/pmix_bridge.h"

#include <algorithm>

namespace grove {

namespace {

using ProcsByNspace = std::map<std::string, std::vector<std::uint32_t>>;

// A daemon's candidate for a group's context id. Every daemon offers one;
// the lowest-numbered participating daemon's wins on all of them. Unique
// DVM-wide: the daemon's vpid above a count it never repeats.
struct GroupContextOffer {
  std::uint64_t candidate = 0;

  static constexpr const char* wire_name = "group context offer";
  static auto wire_fields(auto& m) { return std::tie(m.candidate); }
};

// The engine's name for a collective: in the scope of its first job (its
// state goes when that job ends), every participant listed, so the daemons
// agree.
std::string collective_signature(const std::string& kind, const ProcsByNspace& procs) {
  std::string signature = pmix_fence_scope(procs.begin()->first) + kind;
  for (const auto& [nspace, ranks] : procs)
    signature += "|" + pmix_fence_signature(nspace, ranks);
  return signature;
}

// The agreed context id: the first offer in the release (contributions come
// by vpid ascending), or nothing if the release carries none.
std::optional<std::uint64_t> agreed_context_id(const FenceDone& done) {
  if (!done.release) return std::nullopt;
  auto release = wire_decode<FenceRelease>(*done.release);
  if (!release) return std::nullopt;
  for (const auto& [vpid, bytes] : release->contributions) {
    if (auto offer = wire_decode<GroupContextOffer>(bytes)) return offer->candidate;
  }
  return std::nullopt;
}

}  // namespace

void PmixBridge::on_connect(PmixConnectCall call) {
  PendingConnect pending;
  pending.connect_answer = std::move(call.answer);
  pending.disconnect = call.disconnect;
  begin_collective(call.disconnect ? "disconnect" : "connect", call.procs, std::move(pending),
                   call.timeout_seconds, {});
}

void PmixBridge::on_group(PmixGroupCall call) {
  PendingConnect pending;
  pending.group_answer = std::move(call.answer);
  pending.disconnect = call.destruct;
  pending.group = true;
  pending.wants_context_id = call.assign_context_id && !call.destruct;
  Bytes offer;
  if (pending.wants_context_id) {
    offer = encode(
        GroupContextOffer{(static_cast<std::uint64_t>(runtime_.self()) << 32) | ++group_offers_});
  }
  // The group's name is part of the signature: two groups over the same
  // processes are two collectives.
  const std::string kind = (call.destruct ? "group-destruct:" : "group-construct:") + call.id;
  begin_collective(kind, call.procs, std::move(pending), call.timeout_seconds, std::move(offer));
}

void PmixBridge::begin_collective(const std::string& kind, const ProcsByNspace& procs,
                                  PendingConnect pending, std::uint32_t timeout_seconds,
                                  Bytes contribution) {
  std::vector<Vpid> hosts;
  for (const auto& [nspace, ranks] : procs) {
    const JobSpec* job = job_by_nspace(nspace);
    const bool unknown_rank = job != nullptr && !ranks.empty() && ranks.back() >= job->ranks.size();
    if (job == nullptr || unknown_rank) {
      log_.error("PMIx %s names %s of %s, which is not running", kind.c_str(),
                 job == nullptr ? "the job" : "a rank", nspace.c_str());
      finish_collective(pending, kPmixErrorNotFound, std::nullopt);
      return;
    }
    if (ranks.empty()) {
      for (const RankPlacement& placement : job->ranks)
        hosts.push_back(placement.daemon);
    } else {
      for (std::uint32_t rank : ranks)
        hosts.push_back(job->ranks[rank].daemon);
    }
    pending.nspaces.push_back(nspace);
  }
  const std::string signature = collective_signature(kind, procs);
  pending.round = runtime_.engine().fence_generation(signature) + 1;  // the round it joins
  if (timeout_seconds > 0) {
    // libpmix 4.2 arms a timer of its own for a connect or group with
    // PMIX_TIMEOUT and never cancels it: when it fires, even after the
    // operation completed, its progress thread spins (docs/pmix.md).
    log_.error("PMIx %s carries PMIX_TIMEOUT (%u s): libpmix 4.2 mishandles it once it expires",
               kind.c_str(), timeout_seconds);
  }
  pending.procs = procs;
  if (collective_waits_for_gone(pending, signature)) {
    log_.error("PMIx %s includes a rank that has exited: it cannot complete", signature.c_str());
    finish_collective(pending, kPmixProcTerminated, std::nullopt);
    return;
  }
  pending_connects_.emplace(signature, std::move(pending));
  log_.verbose("daemon", 2, "PMIx %s", signature.c_str());
  runtime_.contribute(FenceRequest{signature, VpidSet::from_list(hosts), std::move(contribution)});
}

bool PmixBridge::collective_waits_for_gone(const PendingConnect& pending,
                                           const std::string& signature) const {
  for (const auto& [nspace, ranks] : pending.procs) {
    const JobSpec* job = job_by_nspace(nspace);
    if (job != nullptr && fences_.waits_for_gone(job->job, ranks, signature, pending.round))
      return true;
  }
  return false;
}

void PmixBridge::fail_collectives_with_gone() {
  for (auto entry = pending_connects_.begin(); entry != pending_connects_.end();) {
    if (!collective_waits_for_gone(entry->second, entry->first)) {
      ++entry;
      continue;
    }
    log_.error("PMIx %s includes a rank that has exited: it cannot complete", entry->first.c_str());
    PendingConnect doomed = std::move(entry->second);
    entry = pending_connects_.erase(entry);
    finish_collective(doomed, kPmixProcTerminated, std::nullopt);
  }
}

void PmixBridge::finish_collective(PendingConnect& pending, int status,
                                   std::optional<std::uint64_t> context_id) {
  if (pending.group) {
    pending.group_answer(status, context_id);
  } else {
    pending.connect_answer(status);
  }
}

void PmixBridge::on_connect_done(const FenceDone& done) {
  auto [first, last] = pending_connects_.equal_range(done.key.signature);
  std::vector<PendingConnect> answered;
  for (auto entry = first; entry != last;) {
    if (entry->second.round > done.key.generation) {
      ++entry;
      continue;
    }
    answered.push_back(std::move(entry->second));
    entry = pending_connects_.erase(entry);
  }
  for (PendingConnect& pending : answered) {
    int status = kPmixSuccess;
    if (done.status != FenceStatus::ok) {
      log_.error("PMIx %s ended: %s (daemon %u)", done.key.signature.c_str(),
                 std::string(fence_status_name(done.status)).c_str(), done.lost);
      status = kPmixErrorUnreachable;
    }
    std::optional<std::uint64_t> context_id;
    if (status == kPmixSuccess && pending.wants_context_id) {
      context_id = agreed_context_id(done);
      if (!context_id) {
        log_.error("PMIx %s: no daemon offered a context id", done.key.signature.c_str());
        status = kPmixError;
      }
    }
    if (status != kPmixSuccess || pending.disconnect) {
      finish_collective(pending, status, context_id);
      continue;
    }
    register_participants(std::move(pending), context_id, done.key.signature);
  }
}

void PmixBridge::register_participants(PendingConnect pending,
                                       std::optional<std::uint64_t> context_id,
                                       const std::string& signature) {
  // libpmix hands the local participants the other jobs' data: every
  // participating job is registered here before the answer. One answer
  // once every registration has been (the extra count is this loop's).
  struct Waiting {
    std::size_t left = 0;
    int status = kPmixSuccess;
    PendingConnect pending;
    std::optional<std::uint64_t> context_id;
  };
  auto waiting = std::make_shared<Waiting>(
      Waiting{pending.nspaces.size() + 1, kPmixSuccess, std::move(pending), context_id});
  auto one_done = [this, waiting, signature](const std::string& nspace, Status registered) {
    if (!registered) {
      log_.error("PMIx %s: %s: %s", signature.c_str(), nspace.c_str(),
                 registered.error().message.c_str());
      waiting->status = kPmixErrorNotFound;
    }
    if (--waiting->left > 0) return;
    const bool ok = waiting->status == kPmixSuccess;
    finish_collective(waiting->pending, waiting->status, ok ? waiting->context_id : std::nullopt);
  };
  for (const std::string& nspace : waiting->pending.nspaces) {
    const JobSpec* job = job_by_nspace(nspace);
    if (job == nullptr) {
      one_done(nspace, Error{"the job has ended"});
    } else {
      ensure_registered(
          *job, [one_done, nspace](Status registered) { one_done(nspace, std::move(registered)); });
    }
  }
  one_done("", ok_status());
}

void PmixBridge::log_declined_invitation(const PmixEvent& event) const {
  // libpmix 4.2's PMIx_Group_invite waits until every invitee has accepted:
  // its own handler passes a decline over, and no host answer reaches that
  // wait (docs/pmix.md, "Process groups"). The decline itself reaches the
  // host, on the decliner's daemon: said once, there, so a leader that
  // hangs can be explained.
  std::string leaders;
  for (const EventProc& target : event.targets) {
    leaders +=
        (leaders.empty() ? "" : ", ") + target.nspace + ":" +
        (target.rank == EventProc::kWholeJob ? std::string("*") : std::to_string(target.rank));
  }
  log_.error(
      "rank %u of %s declined a group invitation%s%s: with libpmix 4.2 the inviter's "
      "PMIx_Group_invite returns only once every invitee has accepted, so it waits for ever "
      "(docs/pmix.md, \"Process groups\")",
      event.source_rank, event.source_nspace.c_str(), leaders.empty() ? "" : " from ",
      leaders.c_str());
}

}  // namespace grove
