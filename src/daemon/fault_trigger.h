// The daemon's side of `debug_fault`: counts the release ops this daemon has
// seen at each fault point and says when the planned one is reached. The
// caller dies there (SIGKILL to itself, as a crash would: no flush, no goodbye).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "rml/membership.h"
#include "util/fault_plan.h"
#include "util/log.h"

namespace grove {

// Releases start at the controller, so tag, tree and id name one.
struct ReleaseOpKey {
  std::uint16_t tag = 0;
  std::uint8_t topology = 0;
  std::uint64_t op_id = 0;
  auto operator<=>(const ReleaseOpKey&) const = default;
};

class FaultTrigger {
 public:
  FaultTrigger() = default;
  FaultTrigger(const FaultPlan& plan, Vpid self);

  bool armed() const { return !mine_.empty(); }
  // Records that `op` reached `point`; returns the planned fault if this is
  // the Nth distinct op there. A repeat of an op already counted is not new.
  std::optional<PlannedFault> reached(FaultPoint point, const ReleaseOpKey& op);

 private:
  FaultPlan mine_;
  std::map<FaultPoint, std::set<ReleaseOpKey>> seen_;  // distinct ops, by point
};

// Logs why and kills the calling process with SIGKILL (or, planned so, makes
// it crash with SIGSEGV). Never returns.
[[noreturn]] void die_for_fault(const Log& log, const PlannedFault& fault, const ReleaseOpKey& op);

}  // namespace grove
