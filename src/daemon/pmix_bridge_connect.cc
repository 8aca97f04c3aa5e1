// PMIx_Connect and PMIx_Disconnect across jobs (what MPI_Comm_spawn,
// MPI_Comm_connect/accept and MPI_Comm_disconnect use): a barrier over the
// engine among the daemons hosting the participants, like a fence. Before a
// connect is answered, every participating job is registered with this
// daemon's PMIx server, so libpmix can hand its local participants the
// others' job data.
#include "daemon/pmix_bridge.h"

#include <algorithm>

namespace grove {

namespace {

// The engine's name for a connect: in the scope of its first job (its state
// goes when that job ends), every participant listed, so the daemons agree.
std::string connect_signature(const PmixConnectCall& call) {
  std::string signature =
      pmix_fence_scope(call.procs.begin()->first) + (call.disconnect ? "disconnect" : "connect");
  for (const auto& [nspace, ranks] : call.procs)
    signature += "|" + pmix_fence_signature(nspace, ranks);
  return signature;
}

}  // namespace

void PmixBridge::on_connect(PmixConnectCall call) {
  const char* what = call.disconnect ? "disconnect" : "connect";
  std::vector<Vpid> hosts;
  PendingConnect pending{call.handle, 0, call.disconnect, {}};
  for (const auto& [nspace, ranks] : call.procs) {
    const JobSpec* job = job_by_nspace(nspace);
    const bool unknown_rank = job != nullptr && !ranks.empty() && ranks.back() >= job->ranks.size();
    if (job == nullptr || unknown_rank) {
      log_.error("PMIx %s names %s of %s, which is not running", what,
                 job == nullptr ? "the job" : "a rank", nspace.c_str());
      (void)server_->complete_connect(call.handle, kPmixErrorNotFound);
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
  const std::string signature = connect_signature(call);
  pending.round = runtime_.engine().fence_generation(signature) + 1;  // the round it joins
  pending_connects_.emplace(signature, pending);
  log_.verbose("daemon", 2, "PMIx %s %s", what, signature.c_str());
  runtime_.contribute(FenceRequest{signature, VpidSet::from_list(hosts), {}});
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
  for (const PendingConnect& pending : answered) {
    int status = kPmixSuccess;
    if (done.status != FenceStatus::ok) {
      log_.error("PMIx connect %s ended: %s (daemon %u)", done.key.signature.c_str(),
                 std::string(fence_status_name(done.status)).c_str(), done.lost);
      status = kPmixErrorUnreachable;
    }
    for (std::size_t i = 0;
         status == kPmixSuccess && !pending.disconnect && i < pending.nspaces.size(); ++i) {
      const JobSpec* job = job_by_nspace(pending.nspaces[i]);
      Status registered =
          job == nullptr ? Status(Error{"the job has ended"}) : ensure_registered(*job);
      if (!registered) {
        log_.error("PMIx connect: %s: %s", pending.nspaces[i].c_str(),
                   registered.error().message.c_str());
        status = kPmixErrorNotFound;
      }
    }
    (void)server_->complete_connect(pending.handle, status);
  }
}

}  // namespace grove
