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
  if (!seen_.insert({point, op}).second) return std::nullopt;
  std::uint64_t count = 0;
  for (const auto& [seen_point, key] : seen_) {
    if (seen_point == point) ++count;
  }
  for (const PlannedFault& spec : mine_) {
    if (spec.point == point && spec.nth == count) return spec;
  }
  return std::nullopt;
}

void die_for_fault(const Log& log, const PlannedFault& fault, const ReleaseOpKey& op) {
  // The log flushes each line, so it is whole even though we die next.
  log.error("debug_fault: dying at %s of release op %llu (number %llu here)",
            std::string(fault_point_name(fault.point)).c_str(),
            static_cast<unsigned long long>(op.op_id), static_cast<unsigned long long>(fault.nth));
  ::kill(::getpid(), SIGKILL);
  std::abort();  // not reached: SIGKILL cannot be caught
}

}  // namespace grove
