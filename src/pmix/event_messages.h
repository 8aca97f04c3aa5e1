// A PMIx event the DVM delivers to the ranks of every daemon: one a rank
// notified beyond its own daemon (PMIx_Notify_event), or one the controller
// raises (a job ended, a rank failed, a daemon was lost). The controller
// broadcasts it (pmix_tags::event); each daemon hands it to its PMIx server,
// which passes it to the local clients that registered for its code and
// that its range and targets admit (docs/pmix.md, "Events").
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "util/bytes.h"
#include "util/wire.h"

namespace grove {

// A process as an event names it: a target, or an affected process.
struct EventProc {
  static constexpr std::uint32_t kWholeJob = std::numeric_limits<std::uint32_t>::max() - 1;
  std::string nspace;
  std::uint32_t rank = kWholeJob;  // kWholeJob: PMIX_RANK_WILDCARD

  bool operator==(const EventProc&) const = default;
  static constexpr const char* wire_name = "event proc";
  static auto wire_fields(auto& m) { return std::tie(m.nspace, m.rank); }
};

// An info entry of a rank's event that grove does not interpret, carried
// as PMIx packs its value (PMIX_GROUP_ID, a group's context id, ...).
struct EventInfo {
  std::string key;
  Bytes packed_value;

  static constexpr const char* wire_name = "event info";
  static auto wire_fields(auto& m) { return std::tie(m.key, m.packed_value); }
};

struct PmixEvent {
  static constexpr std::uint32_t kNoDaemon = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kWholeJob = EventProc::kWholeJob;
  // pmix_data_range_t values grove chooses between.
  static constexpr std::uint8_t kRangeLocal = 2;
  static constexpr std::uint8_t kRangeNamespace = 3;
  static constexpr std::uint8_t kRangeSession = 4;
  static constexpr std::uint8_t kRangeCustom = 6;
  static constexpr std::uint8_t kRangeProcLocal = 7;

  std::int32_t code = 0;      // a pmix_status_t event code
  std::string source_nspace;  // who raised it (empty: the DVM itself)
  std::uint32_t source_rank = 0;
  std::uint8_t range = kRangeSession;  // a pmix_data_range_t
  std::vector<EventProc> targets;      // PMIX_EVENT_CUSTOM_RANGE (range custom)
  std::vector<EventProc> affected;     // PMIX_EVENT_AFFECTED_PROC(S)
  bool has_status = false;             // PMIX_JOB_TERM_STATUS
  std::int32_t status = 0;
  bool has_exit_code = false;  // PMIX_EXIT_CODE
  std::int32_t exit_code = 0;
  std::string message;       // PMIX_EVENT_TEXT_MESSAGE; empty: none
  bool non_default = false;  // PMIX_EVENT_NON_DEFAULT: no default handler sees it
  bool cached = true;        // false: PMIX_EVENT_DO_NOT_CACHE, never replayed
  std::vector<EventInfo> info;
  std::uint32_t origin = kNoDaemon;  // the daemon whose clients already had it

  static constexpr const char* wire_name = "pmix event";
  static auto wire_fields(auto& m) {
    return std::tie(m.code, m.source_nspace, m.source_rank, m.range, m.targets, m.affected,
                    m.has_status, m.status, m.has_exit_code, m.exit_code, m.message, m.non_default,
                    m.cached, m.info, m.origin);
  }
};

}  // namespace grove
