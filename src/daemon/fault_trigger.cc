#include "daemon/fault_trigger.h"

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace grove {

FaultTrigger::FaultTrigger(const FaultPlan& plan, Vpid self) {
  for (const PlannedFault& spec : plan) {
    if (spec.vpid == self) mine_.push_back(spec);
  }
}

std::optional<PlannedFault> FaultTrigger::reached(FaultPoint point, const ReleaseOpKey& op) {
  if (mine_.empty()) return std::nullopt;
  std::set<ReleaseOpKey>& seen = seen_[point];
  if (!seen.insert(op).second) return std::nullopt;
  const std::uint64_t count = seen.size();
  for (const PlannedFault& spec : mine_) {
    if (spec.point == point && spec.nth == count) return spec;
  }
  return std::nullopt;
}

void die_for_fault(const Log& log, const PlannedFault& fault, const ReleaseOpKey& op) {
  // The log flushes each line, so it is whole even though we die next.
  if (fault.point == FaultPoint::join_welcomed || fault.point == FaultPoint::join_seeded) {
    log.error("debug_fault: dying at %s", std::string(fault_point_name(fault.point)).c_str());
  } else {
    log.error("debug_fault: dying at %s of release op %llu (number %llu here)",
              std::string(fault_point_name(fault.point)).c_str(),
              static_cast<unsigned long long>(op.op_id),
              static_cast<unsigned long long>(fault.nth));
  }
  if (fault.death == FaultDeath::segv) {
    // A crash: the fatal-signal handler sees it (daemon/fatal_signal_dump.h).
    log.error("debug_fault: crashing with SIGSEGV");
    ::raise(SIGSEGV);
  }
  ::kill(::getpid(), SIGKILL);
  std::abort();  // not reached: SIGKILL cannot be caught
}

}  // namespace grove
