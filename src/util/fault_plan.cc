#include "util/fault_plan.h"

#include "util/text.h"

namespace grove {
namespace {

constexpr FaultPoint kPoints[] = {FaultPoint::release_received, FaultPoint::release_delivered,
                                  FaultPoint::join_welcomed, FaultPoint::join_seeded,
                                  FaultPoint::exchange_received};

}  // namespace

std::string_view fault_point_name(FaultPoint point) {
  switch (point) {
    case FaultPoint::release_received:
      return "release-received";
    case FaultPoint::release_delivered:
      return "release-delivered";
    case FaultPoint::join_welcomed:
      return "join-welcomed";
    case FaultPoint::join_seeded:
      return "join-seeded";
    case FaultPoint::exchange_received:
      return "exchange-received";
  }
  return "unknown";
}

Result<FaultPlan> parse_fault_plan(std::string_view text) {
  FaultPlan plan;
  if (trim(text).empty()) return plan;
  for (const std::string& entry : split(text, ',')) {
    auto fail = [&](const std::string& why) -> Result<FaultPlan> {
      return Error{
          "fault '" + std::string(trim(entry)) + "': " + why +
          " (expected VPID:POINT[:N[:HOW]], POINT one of release-received, "
          "release-delivered, join-welcomed, join-seeded, exchange-received; HOW kill or segv)"};
    };
    auto fields = split(trim(entry), ':');
    if (fields.size() < 2 || fields.size() > 4) return fail("wrong number of fields");
    PlannedFault spec;
    auto vpid = parse_int(trim(fields[0]));
    if (!vpid || *vpid < 0 || *vpid > 0xFFFFFFF) return fail("bad vpid");
    // The controller holds the DVM's state; losing it is not a repairable fault.
    if (*vpid == 0) return fail("vpid 0 is the controller and cannot be a victim");
    spec.vpid = static_cast<std::uint32_t>(*vpid);
    bool known = false;
    for (FaultPoint point : kPoints) {
      if (trim(fields[1]) == fault_point_name(point)) {
        spec.point = point;
        known = true;
      }
    }
    if (!known) return fail("unknown point '" + std::string(trim(fields[1])) + "'");
    if (fields.size() >= 3) {
      auto nth = parse_int(trim(fields[2]));
      if (!nth || *nth < 1) return fail("N must be a positive integer");
      spec.nth = static_cast<std::uint64_t>(*nth);
      const bool join =
          spec.point == FaultPoint::join_welcomed || spec.point == FaultPoint::join_seeded;
      if (join && spec.nth != 1) return fail("a daemon joins once: N must be 1 at a join point");
    }
    if (fields.size() == 4) {
      const std::string_view how = trim(fields[3]);
      if (how == "segv") {
        spec.death = FaultDeath::segv;
      } else if (how != "kill") {
        return fail("HOW must be kill or segv");
      }
    }
    plan.push_back(spec);
  }
  return plan;
}

}  // namespace grove
