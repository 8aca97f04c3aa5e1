// Who a rank is, in the environment every rank gets from its daemon: grove's
// own names and the ones Open MPI users' scripts read (they pick GPUs and
// files by them; srun has SLURM_PROCID, flux FLUX_TASK_RANK). A daemon is a
// node here, as PMIx is told (docs/jobs.md, "What a rank is told").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/job_map.h"

namespace grove {

// "NAME=value" entries: GROVE_RANK, GROVE_SIZE, GROVE_LOCAL_RANK,
// GROVE_LOCAL_SIZE, GROVE_NODE_RANK and OMPI_COMM_WORLD_{RANK,SIZE,
// LOCAL_RANK,LOCAL_SIZE,NODE_RANK}. `local_size`: the job's ranks on the
// rank's daemon.
std::vector<std::string> rank_identity_env(const RankPlacement& placement, std::uint32_t job_size,
                                           std::uint32_t local_size);

}  // namespace grove
