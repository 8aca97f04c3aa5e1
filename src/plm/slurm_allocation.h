// The hosts of the Slurm allocation we run in, read from the variables
// salloc/sbatch set (SLURM_JOB_ID, SLURM_JOB_NODELIST,
// SLURM_JOB_CPUS_PER_NODE). Pure: the variables come in as values.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "plm/host_list.h"
#include "util/result.h"

namespace grove {

struct SlurmEnvironment {
  std::string job_id;         // SLURM_JOB_ID (or SLURM_JOBID); empty outside an allocation
  std::string nodelist;       // SLURM_JOB_NODELIST (or SLURM_NODELIST), compressed
  std::string cpus_per_node;  // SLURM_JOB_CPUS_PER_NODE: "2(x3),1"

  bool in_allocation() const { return !job_id.empty(); }
};

// Reads the variables through `lookup` (getenv in the CLI).
SlurmEnvironment read_slurm_environment(const std::function<const char*(const char*)>& lookup);

// Expands SLURM_JOB_CPUS_PER_NODE ("2(x3),1" -> 2 2 2 1) and checks that it
// covers exactly `nodes` nodes.
Result<std::vector<std::uint32_t>> parse_cpus_per_node(std::string_view text, std::size_t nodes);

// The allocation's hosts in Slurm's node order, each with the CPUs the
// allocation gives it on that node as its slots.
Result<std::vector<HostEntry>> allocation_hosts(const SlurmEnvironment& environment);

// A partial allocation: the hosts the user listed (--host/--hostfile), each
// of which must be in the allocation, returned in the allocation's order
// (srun numbers a step's nodes that way); slots the user did not give come
// from the allocation.
Result<std::vector<HostEntry>> select_from_allocation(const std::vector<HostEntry>& allocation,
                                                      const std::vector<HostEntry>& listed);

// A daemon started by srun: `base` plus the node id srun gave its task.
Result<std::uint32_t> vpid_from_slurm(std::uint32_t base, const char* slurm_node_id);

}  // namespace grove
