// Deterministic fault injection (`debug_fault`): which daemon dies, and at
// which point of which release. Tests use it so a fault lands where they mean
// it to whatever the machine's load; nothing here races a sleep or a log line.
//
// Syntax: a comma-separated list of VPID:POINT[:N[:HOW]]. POINT is one of the
// names below; N (default 1) counts distinct release ops at that daemon;
// HOW is kill (default: SIGKILL, nothing runs) or segv (a crash: SIGSEGV,
// which the daemon's fatal-signal handler sees).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace grove {

enum class FaultPoint : std::uint8_t {
  // The Nth release op's data frame has arrived; the engine has not seen it,
  // so the daemon neither delivers nor forwards it.
  release_received,
  // The Nth release op was delivered at this daemon (and logged); the
  // release has not been handed to local ranks. Forwarding is whatever the
  // engine did before delivering (none while grpcomm_release_delay_ms holds it).
  release_delivered,
  // A daemon grown into the DVM (grove grow, a respawn) has its welcome: the
  // controller has declared its join or return, every daemon takes it in,
  // and this one has not yet adopted its seed.
  join_welcomed,
  // It has adopted its seed (it is a member in step with the rest) and
  // nothing else has happened yet.
  join_seeded,
  // A Bruck fence (grpcomm_fence_topology bruck): a round frame of the Nth
  // fence round (by generation) has arrived; the engine has not seen it, so
  // the daemon sends none of that exchange's later rounds. Whatever it sent
  // before (its own round 0, if it had contributed) is out.
  exchange_received,
};

std::string_view fault_point_name(FaultPoint point);

enum class FaultDeath : std::uint8_t { kill, segv };

struct PlannedFault {
  std::uint32_t vpid = 0;
  FaultPoint point = FaultPoint::release_received;
  std::uint64_t nth = 1;
  FaultDeath death = FaultDeath::kill;
};

using FaultPlan = std::vector<PlannedFault>;

// "" is the empty plan. Errors name the entry at fault.
Result<FaultPlan> parse_fault_plan(std::string_view text);

}  // namespace grove
