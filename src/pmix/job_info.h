// Internal to grove_pmix. Checks a PmixJob and turns it into the info array
// of PMIx_server_register_nspace: job-level keys, the node map and proc map
// (PMIx regexes), one node array per node hosting ranks, and one proc array
// per rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pmix/info_list.h"
#include "pmix/server.h"
#include "util/result.h"

namespace grove::pmix_internal {

// The ranks of `job` this daemon hosts, in rank order, or why the job is
// malformed (ranks out of order, node ids out of range, duplicate node names,
// local ranks placed on a node other than this_node_id, ...).
Result<std::vector<std::uint32_t>> validate_job(const PmixJob& job, std::uint32_t daemon_vpid);

// The info array for PMIx_server_register_nspace. `local_ranks` comes from
// validate_job.
Result<InfoArray> build_job_info(const PmixJob& job, const std::vector<std::uint32_t>& local_ranks);

// Ranks as the plain comma list PMIx expects: "0,1,2".
std::string join_ranks(const std::vector<std::uint32_t>& ranks);

}  // namespace grove::pmix_internal
