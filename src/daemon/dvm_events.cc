#include "daemon/dvm_events.h"

#include "pmix/server.h"

namespace grove {
namespace {

// A job's ranks and its spawner: the custom range of the job's events. The
// source is the job itself (rank 0, or the failed rank), as PRRTE gives it.
PmixEvent job_event(const std::string& nspace, const Spawner& spawner) {
  PmixEvent event;
  event.range = PmixEvent::kRangeCustom;
  event.targets.push_back(EventProc{nspace, EventProc::kWholeJob});
  if (spawner) event.targets.push_back(EventProc{spawner->first, spawner->second});
  event.source_nspace = nspace;
  event.source_rank = 0;
  return event;
}

}  // namespace

PmixEvent rank_failed_event(const std::string& nspace, std::uint32_t rank, RankFailure how,
                            int status, const std::string& message, const Spawner& spawner) {
  PmixEvent failed = job_event(nspace, spawner);
  switch (how) {
    case RankFailure::aborted:
      failed.code = kPmixErrorProcRequestedAbort;
      break;
    case RankFailure::signaled:
      failed.code = kPmixErrorProcAbortedBySignal;
      break;
    case RankFailure::left_without_finalize:
      failed.code = kPmixErrorProcTermWithoutSync;
      break;
    case RankFailure::exited:
    case RankFailure::never_started:
      failed.code = kPmixEventProcTerminated;
      break;
  }
  failed.source_rank = rank;
  failed.affected.push_back(EventProc{nspace, rank});
  // The status it exited (or aborted) with; a signal as a shell shows it.
  if (how != RankFailure::never_started) {
    failed.has_exit_code = true;
    failed.exit_code = how == RankFailure::signaled ? 128 + status : status;
  }
  failed.message = message;
  return failed;
}

PmixEvent job_end_event(const std::string& nspace, int status, const std::string& message,
                        const Spawner& spawner) {
  PmixEvent ended = job_event(nspace, spawner);
  ended.code = kPmixEventJobEnd;
  // Only handlers registered for a job's end, as PRRTE marks it.
  ended.non_default = true;
  ended.affected.push_back(EventProc{nspace, EventProc::kWholeJob});
  // A PMIx status (PRRTE's fix: not the exit status), which goes apart.
  ended.has_status = true;
  ended.status = status == 0 ? kPmixSuccess : kPmixErrorJobNonZeroTerm;
  ended.has_exit_code = true;
  ended.exit_code = status;
  ended.message = "job " + nspace + " ended with status " + std::to_string(status) +
                  (message.empty() ? "" : ": " + message);
  return ended;
}

PmixEvent daemon_lost_event(std::uint32_t vpid, const std::string& message) {
  PmixEvent down;
  down.code = kPmixEventNodeDown;
  down.range = PmixEvent::kRangeSession;
  down.cached = false;  // a job started later learns of the DVM from its status
  down.affected.push_back(EventProc{"grove.daemons", vpid});
  down.message = message;
  return down;
}

}  // namespace grove
