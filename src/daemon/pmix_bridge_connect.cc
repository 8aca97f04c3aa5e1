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
#include <memory>

namespace grove {

namespace {

int pmix_status_of(pmix_collective::Outcome outcome) {
  using pmix_collective::Outcome;
  switch (outcome) {
    case Outcome::done:
      return kPmixSuccess;
    case Outcome::rank_gone:
    case Outcome::job_ended:
      return kPmixProcTerminated;
    case Outcome::unreachable:
      return kPmixErrorUnreachable;
    case Outcome::no_context:
      return kPmixError;
  }
  return kPmixError;
}

}  // namespace

void PmixBridge::on_connect(PmixConnectCall call) {
  PmixCollectiveBook::Call collective;
  collective.kind = call.disconnect ? "disconnect" : "connect";
  collective.registers = !call.disconnect;
  collective.timeout_seconds = call.timeout_seconds;
  CollectiveWaiter waiter;
  waiter.connect_answer = std::move(call.answer);
  begin_collective(std::move(collective), call.procs, std::move(waiter));
}

void PmixBridge::on_group(PmixGroupCall call) {
  PmixCollectiveBook::Call collective;
  // The group's name is part of the signature: two groups over the same
  // processes are two collectives.
  collective.kind = (call.destruct ? "group-destruct:" : "group-construct:") + call.id;
  collective.registers = !call.destruct;
  collective.wants_context_id = call.assign_context_id && !call.destruct;
  collective.timeout_seconds = call.timeout_seconds;
  CollectiveWaiter waiter;
  waiter.group_answer = std::move(call.answer);
  waiter.group = true;
  begin_collective(std::move(collective), call.procs, std::move(waiter));
}

void PmixBridge::begin_collective(PmixCollectiveBook::Call call,
                                  const std::map<std::string, std::vector<std::uint32_t>>& procs,
                                  CollectiveWaiter waiter) {
  std::vector<Vpid> hosts;
  for (const auto& [nspace, ranks] : procs) {
    const JobSpec* job = job_by_nspace(nspace);
    const bool unknown_rank = job != nullptr && !ranks.empty() && ranks.back() >= job->ranks.size();
    if (job == nullptr || unknown_rank) {
      log_.error("PMIx %s names %s of %s, which is not running", call.kind.c_str(),
                 job == nullptr ? "the job" : "a rank", nspace.c_str());
      if (waiter.group) {
        waiter.group_answer(kPmixErrorNotFound, std::nullopt);
      } else {
        waiter.connect_answer(kPmixErrorNotFound);
      }
      return;
    }
    if (ranks.empty()) {
      for (const RankPlacement& placement : job->ranks)
        hosts.push_back(placement.daemon);
    } else {
      for (std::uint32_t rank : ranks)
        hosts.push_back(job->ranks[rank].daemon);
    }
    call.jobs.push_back({job->job, nspace, ranks});
  }
  call.hosts = VpidSet::from_list(std::move(hosts));
  const std::string signature = PmixCollectiveBook::signature_of(call.kind, call.jobs);
  const std::uint64_t round = runtime_.engine().fence_generation(signature) + 1;  // it joins
  PmixCollectiveBook::Begun begun = collectives_.begin(std::move(call), round, fences_);
  collective_waiters_.emplace(begun.id, std::move(waiter));
  log_.verbose("daemon", 2, "PMIx %s", signature.c_str());
  drive(std::move(begun.outbox));
}

void PmixBridge::drive(pmix_collective::Outbox outbox) {
  for (pmix_collective::Effect& effect : outbox) {
    std::visit(
        [&](auto& step) {
          using Step = std::decay_t<decltype(step)>;
          if constexpr (std::is_same_v<Step, pmix_collective::Answer>) {
            finish_collective(step.id, pmix_status_of(step.outcome),
                              step.context_id != 0 ? std::optional(step.context_id) : std::nullopt);
          } else if constexpr (std::is_same_v<Step, pmix_collective::Contribute>) {
            runtime_.contribute(std::move(step.request));
          } else if constexpr (std::is_same_v<Step, pmix_collective::RegisterThenAnswer>) {
            register_participants(step);
          } else if constexpr (std::is_same_v<Step, pmix_collective::Notice>) {
            log_.error("%s", step.text.c_str());
          } else {
            static_assert(sizeof(Step) == 0, "a PMIx collective effect without a driver");
          }
        },
        effect);
  }
}

void PmixBridge::finish_collective(std::uint64_t id, int status,
                                   std::optional<std::uint64_t> context_id) {
  auto found = collective_waiters_.find(id);
  if (found == collective_waiters_.end()) return;
  CollectiveWaiter waiter = std::move(found->second);
  collective_waiters_.erase(found);
  if (waiter.group) {
    waiter.group_answer(status, context_id);
  } else {
    waiter.connect_answer(status);
  }
}

void PmixBridge::register_participants(const pmix_collective::RegisterThenAnswer& registering) {
  // libpmix hands the local participants the other jobs' data: every
  // participating job is registered here before the answer. One answer
  // once every registration has been (the extra count is this loop's).
  struct Waiting {
    std::size_t left = 0;
    int status = kPmixSuccess;
  };
  auto waiting = std::make_shared<Waiting>(Waiting{registering.nspaces.size() + 1, kPmixSuccess});
  auto one_done = [this, waiting, id = registering.id,
                   context_id = registering.context_id != 0 ? std::optional(registering.context_id)
                                                            : std::nullopt,
                   signature = registering.signature](const std::string& nspace,
                                                      Status registered) {
    if (!registered) {
      log_.error("PMIx %s: %s: %s", signature.c_str(), nspace.c_str(),
                 registered.error().message.c_str());
      waiting->status = kPmixErrorNotFound;
    }
    if (--waiting->left > 0) return;
    const bool ok = waiting->status == kPmixSuccess;
    finish_collective(id, waiting->status, ok ? context_id : std::nullopt);
  };
  for (const std::string& nspace : registering.nspaces) {
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
