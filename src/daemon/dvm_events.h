// The PMIx events the DVM itself raises, and who they concern. A job's
// events (a rank failed, the job ended) go to that job's ranks and to the
// rank that spawned it, never to other jobs and never replayed to a job
// started later; a lost daemon concerns every running job, now, and is not
// replayed either. docs/pmix.md ("Events") sets them beside PRRTE's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "daemon/control_plane/job_table.h"
#include "pmix/event_messages.h"

namespace grove {

// The rank that spawned a job (PMIx_Spawn), if one did.
using Spawner = std::optional<std::pair<std::string, std::uint32_t>>;

PmixEvent rank_failed_event(const std::string& nspace, std::uint32_t rank, RankFailure how,
                            int status, const std::string& message, const Spawner& spawner);
PmixEvent job_end_event(const std::string& nspace, int status, const std::string& message,
                        const Spawner& spawner);
PmixEvent daemon_lost_event(std::uint32_t vpid, const std::string& message);

}  // namespace grove
