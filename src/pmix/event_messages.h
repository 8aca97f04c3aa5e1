// A PMIx event the DVM delivers to the ranks of every daemon: one a rank
// notified beyond its own daemon (PMIx_Notify_event), or one the controller
// raises (a job ended, a daemon was lost). The controller broadcasts it
// (pmix_tags::event); each daemon hands it to its PMIx server, which passes
// it to the local clients that registered for its code and range.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "util/wire.h"

namespace grove {

struct PmixEvent {
  static constexpr std::uint32_t kNoDaemon = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t kWholeJob = std::numeric_limits<std::uint32_t>::max() - 1;

  std::int32_t code = 0;      // a pmix_status_t event code
  std::string source_nspace;  // who raised it (empty: the delivering daemon)
  std::uint32_t source_rank = 0;
  std::uint8_t range = 4;                   // a pmix_data_range_t (PMIX_RANGE_SESSION)
  std::string affected_nspace;              // PMIX_EVENT_AFFECTED_PROC; empty: none
  std::uint32_t affected_rank = kWholeJob;  // kWholeJob: the wildcard rank
  bool has_status = false;                  // PMIX_JOB_TERM_STATUS
  std::int32_t status = 0;
  std::string message;               // PMIX_EVENT_TEXT_MESSAGE; empty: none
  std::uint32_t origin = kNoDaemon;  // the daemon whose clients already had it

  static constexpr const char* wire_name = "pmix event";
  static auto wire_fields(auto& m) {
    return std::tie(m.code, m.source_nspace, m.source_rank, m.range, m.affected_nspace,
                    m.affected_rank, m.has_status, m.status, m.message, m.origin);
  }
};

}  // namespace grove
