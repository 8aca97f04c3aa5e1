// Slurm's compressed host lists (`node[01-04,7],login1`, `r[1-2]n[1-3]`) as
// found in SLURM_JOB_NODELIST, expanded in Slurm's order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace grove {

// Expands a host list. Ranges keep the lower bound's zero padding
// (node[08-10] -> node08 node09 node10); several bracket groups in one name
// expand as a product, the last varying fastest. Errors name the bad part.
Result<std::vector<std::string>> expand_slurm_hostlist(std::string_view list);

}  // namespace grove
