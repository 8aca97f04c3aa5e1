#include "pmix/job_info.h"

#include <hwloc.h>
#include <pmix_server.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <set>

namespace grove::pmix_internal {
namespace {

struct FreeDeleter {
  void operator()(char* text) const { std::free(text); }
};
using MallocText = std::unique_ptr<char, FreeDeleter>;

// The nodes that host ranks, in node id order, each with its ranks in order.
struct NodeRanks {
  std::uint32_t node_id = 0;
  std::vector<std::uint32_t> ranks;
};

// libpmix's description of where CPUs `cpu_list` sit in this node's
// topology (PMIX_LOCALITY_STRING), which Open MPI compares between peers;
// empty if it cannot say.
std::string locality_of(const std::string& cpu_list) {
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> set(hwloc_bitmap_alloc(),
                                                                hwloc_bitmap_free);
  if (!set || hwloc_bitmap_list_sscanf(set.get(), cpu_list.c_str()) != 0) return "";
  pmix_cpuset_t cpuset{};
  cpuset.source = const_cast<char*>("hwloc");
  cpuset.bitmap = set.get();
  char* locality = nullptr;
  if (PMIx_server_generate_locality_string(&cpuset, &locality) != PMIX_SUCCESS ||
      locality == nullptr) {
    return "";
  }
  MallocText owned(locality);
  return owned.get();
}

std::vector<NodeRanks> ranks_by_node(const PmixJob& job) {
  std::vector<std::vector<std::uint32_t>> per_node(job.node_hostnames.size());
  for (const PmixProcPlacement& proc : job.procs)
    per_node[proc.node_id].push_back(proc.rank);
  std::vector<NodeRanks> nodes;
  for (std::uint32_t node = 0; node < per_node.size(); ++node) {
    if (!per_node[node].empty()) nodes.push_back(NodeRanks{node, std::move(per_node[node])});
  }
  return nodes;
}

Status check_node_names(const PmixJob& job) {
  if (job.node_hostnames.empty()) return Error{"job " + job.nspace + " has no nodes"};
  std::set<std::string> seen;
  for (const std::string& name : job.node_hostnames) {
    if (name.empty() || name.find_first_of(",; ") != std::string::npos) {
      return Error{"job " + job.nspace + ": node name '" + name +
                   "' is empty or contains ',', ';' or a space"};
    }
    if (!seen.insert(name).second) {
      return Error{"job " + job.nspace + ": node name '" + name +
                   "' appears twice; daemons sharing a host need distinct node names"};
    }
  }
  if (job.this_node_id >= job.node_hostnames.size()) {
    return Error{"job " + job.nspace + ": this_node_id " + std::to_string(job.this_node_id) +
                 " is not a node of the job"};
  }
  return ok_status();
}

Status check_sizes(const PmixJob& job) {
  if (job.nspace.empty() || job.nspace.size() > PMIX_MAX_NSLEN) {
    return Error{"nspace '" + job.nspace + "' must have 1 to " + std::to_string(PMIX_MAX_NSLEN) +
                 " characters"};
  }
  if (job.size == 0 || job.procs.size() != job.size) {
    return Error{"job " + job.nspace + ": size " + std::to_string(job.size) + " but " +
                 std::to_string(job.procs.size()) + " placements"};
  }
  std::uint64_t app_ranks = 0;
  for (const PmixApp& app : job.apps)
    app_ranks += app.size;
  if (!job.apps.empty() && app_ranks != job.size) {
    return Error{"job " + job.nspace + ": its apps have " + std::to_string(app_ranks) +
                 " ranks, the job " + std::to_string(job.size)};
  }
  if (job.universe_size != 0 && job.universe_size < job.size) {
    return Error{"job " + job.nspace + ": universe size " + std::to_string(job.universe_size) +
                 " is smaller than the job"};
  }
  return ok_status();
}

std::string join(const std::vector<std::string>& parts, char separator) {
  std::string joined;
  for (const std::string& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

// PMIx_generate_regex / PMIx_generate_ppn output, loaded as PMIX_REGEX.
Status add_maps(const PmixJob& job, const std::vector<NodeRanks>& nodes, InfoList& list) {
  std::vector<std::string> names;
  std::vector<std::string> rank_lists;
  for (const NodeRanks& node : nodes) {
    names.push_back(job.node_hostnames[node.node_id]);
    rank_lists.push_back(join_ranks(node.ranks));
  }
  char* raw = nullptr;
  pmix_status_t status = PMIx_generate_regex(join(names, ',').c_str(), &raw);
  MallocText node_map(raw);
  if (status != PMIX_SUCCESS) {
    return Error{std::string("PMIx_generate_regex: ") + PMIx_Error_string(status)};
  }
  raw = nullptr;
  status = PMIx_generate_ppn(join(rank_lists, ';').c_str(), &raw);
  MallocText proc_map(raw);
  if (status != PMIX_SUCCESS) {
    return Error{std::string("PMIx_generate_ppn: ") + PMIx_Error_string(status)};
  }
  list.add_regex(PMIX_NODE_MAP, node_map.get());
  list.add_regex(PMIX_PROC_MAP, proc_map.get());
  return ok_status();
}

Status add_node_arrays(const PmixJob& job, const std::vector<NodeRanks>& nodes, InfoList& list) {
  for (const NodeRanks& node : nodes) {
    InfoList entry;
    // The name first, as PRRTE has it: libpmix 4.2 files a node array by
    // its first identifier, and a get by node id then finds the name too.
    entry.add_string(PMIX_HOSTNAME, job.node_hostnames[node.node_id]);
    entry.add_u32(PMIX_NODEID, node.node_id);
    entry.add_string(PMIX_LOCAL_PEERS, join_ranks(node.ranks));
    entry.add_u32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(node.ranks.size()));
    // PMIx means every job's ranks on the node; grove counts this job's
    // (other jobs come and go without re-registering this one).
    entry.add_u32(PMIX_NODE_SIZE, static_cast<std::uint32_t>(node.ranks.size()));
    entry.add_rank(PMIX_LOCALLDR, node.ranks.front());
    // libpmix files node facts given at job level under the host's own
    // name, which is not the node's name when daemons share a host: this
    // node's facts go in its array, where a get by node id finds them.
    if (node.node_id == job.this_node_id) {
      entry.add_procs(PMIX_LOCAL_PROCS, job.nspace, node.ranks);
      if (job.avail_phys_memory > 0) entry.add_u64(PMIX_AVAIL_PHYS_MEMORY, job.avail_phys_memory);
    }
    const auto& over = job.oversubscribed_nodes;
    if (std::find(over.begin(), over.end(), node.node_id) != over.end())
      entry.add_bool(PMIX_NODE_OVERSUBSCRIBED, true);
    Result<InfoArray> array = entry.take_array();
    if (!array) return array.error();
    list.add_array(PMIX_NODE_INFO_ARRAY, *array);
  }
  return ok_status();
}

// The apps as registered: the job's, or one app of every rank.
std::vector<PmixApp> apps_of(const PmixJob& job) {
  if (!job.apps.empty()) return job.apps;
  return {PmixApp{job.size, "", ""}};
}

Status add_proc_arrays(const PmixJob& job, const std::vector<std::uint32_t>& local_ranks,
                       InfoList& list) {
  const std::vector<PmixApp> apps = apps_of(job);
  std::uint32_t app = 0, app_first = 0;
  for (const PmixProcPlacement& proc : job.procs) {
    // Ranks are in order (validate_job): the app changes at its first rank.
    while (app + 1 < apps.size() && proc.rank >= app_first + apps[app].size)
      app_first += apps[app++].size;
    InfoList entry;
    entry.add_rank(PMIX_RANK, proc.rank);  // must come first
    entry.add_rank(PMIX_GLOBAL_RANK, proc.rank);
    entry.add_rank(PMIX_APP_RANK, proc.rank - app_first);
    entry.add_u32(PMIX_APPNUM, app);
    entry.add_u16(PMIX_LOCAL_RANK, proc.local_rank);
    entry.add_u16(PMIX_NODE_RANK, proc.node_rank);
    entry.add_u32(PMIX_NODEID, proc.node_id);
    entry.add_string(PMIX_HOSTNAME, job.node_hostnames[proc.node_id]);
    entry.add_u32(PMIX_REINCARNATION, 0);  // grove never restarts a rank
    if (!job.parent_nspace.empty()) {
      // Per proc, as PRRTE registers them: a rank asks about itself.
      entry.add_proc(PMIX_PARENT_ID, job.parent_nspace, job.parent_rank);
      entry.add_bool(PMIX_SPAWNED, true);
    }
    const bool local = std::binary_search(local_ranks.begin(), local_ranks.end(), proc.rank);
    if (local && !job.nsdir.empty()) {
      entry.add_string(PMIX_PROCDIR, job.nsdir + "/" + std::to_string(proc.rank));
    }
    if (local && !proc.cpuset.empty()) {
      entry.add_string(PMIX_CPUSET, proc.cpuset);
      if (std::string locality = locality_of(proc.cpuset); !locality.empty())
        entry.add_string(PMIX_LOCALITY_STRING, locality);
    }
    Result<InfoArray> array = entry.take_array();
    if (!array) return array.error();
    list.add_array(PMIX_PROC_INFO_ARRAY, *array);
  }
  return ok_status();
}

Status add_app_arrays(const PmixJob& job, InfoList& list) {
  std::uint32_t first = 0, number = 0;
  for (const PmixApp& app : apps_of(job)) {
    InfoList entry;
    entry.add_u32(PMIX_APPNUM, number++);  // must come first
    entry.add_u32(PMIX_APP_SIZE, app.size);
    entry.add_rank(PMIX_APPLDR, first);
    if (!app.wdir.empty()) entry.add_string(PMIX_WDIR, app.wdir);
    if (!app.argv.empty()) entry.add_string(PMIX_APP_ARGV, app.argv);
    Result<InfoArray> array = entry.take_array();
    if (!array) return array.error();
    list.add_array(PMIX_APP_INFO_ARRAY, *array);
    first += app.size;
  }
  return ok_status();
}

}  // namespace

std::string join_ranks(const std::vector<std::uint32_t>& ranks) {
  std::string joined;
  for (std::uint32_t rank : ranks) {
    if (!joined.empty()) joined += ',';
    joined += std::to_string(rank);
  }
  return joined;
}

Result<std::vector<std::uint32_t>> validate_job(const PmixJob& job, std::uint32_t daemon_vpid) {
  if (Status sizes = check_sizes(job); !sizes) return sizes.error();
  if (Status names = check_node_names(job); !names) return names.error();
  std::vector<std::uint32_t> local_ranks;
  std::set<std::uint16_t> local_indexes;
  for (std::uint32_t index = 0; index < job.procs.size(); ++index) {
    const PmixProcPlacement& proc = job.procs[index];
    std::string which = "job " + job.nspace + " rank " + std::to_string(index);
    if (proc.rank != index) return Error{which + ": placements must be in rank order"};
    if (proc.node_id >= job.node_hostnames.size()) {
      return Error{which + ": node id " + std::to_string(proc.node_id) + " out of range"};
    }
    if (proc.daemon_vpid != daemon_vpid) continue;
    if (proc.node_id != job.this_node_id) {
      return Error{which + ": hosted by this daemon but placed on node " +
                   std::to_string(proc.node_id)};
    }
    if (!local_indexes.insert(proc.local_rank).second) {
      return Error{which + ": local rank " + std::to_string(proc.local_rank) + " used twice"};
    }
    local_ranks.push_back(proc.rank);
  }
  return local_ranks;
}

Result<InfoArray> build_job_info(const PmixJob& job,
                                 const std::vector<std::uint32_t>& local_ranks) {
  std::vector<NodeRanks> nodes = ranks_by_node(job);
  InfoList list;
  list.add_string(PMIX_JOBID, job.nspace);
  list.add_u32(PMIX_JOB_SIZE, job.size);
  list.add_u32(PMIX_UNIV_SIZE, job.universe_size == 0 ? job.size : job.universe_size);
  list.add_u32(PMIX_MAX_PROCS, job.universe_size == 0 ? job.size : job.universe_size);
  list.add_u32(PMIX_JOB_NUM_APPS, static_cast<std::uint32_t>(apps_of(job).size()));
  list.add_rank(PMIX_NPROC_OFFSET, 0);  // every job's ranks start at 0
  if (!job.map_by.empty()) {
    list.add_string(PMIX_MAPBY, job.map_by);
    list.add_string(PMIX_RANKBY, job.map_by);  // ranks follow the mapping
  }
  list.add_string(PMIX_BINDTO, job.bind_to);
  list.add_bool(PMIX_HOSTNAME_KEEP_FQDN, true);  // node names are kept as daemons report them
  // Where Open MPI keeps its session files: under grove's, cleaned with it.
  if (!job.tmpdir.empty()) list.add_string(PMIX_TMPDIR, job.tmpdir);
  if (!job.nsdir.empty()) list.add_string(PMIX_NSDIR, job.nsdir);
  list.add_u32(PMIX_NUM_NODES, static_cast<std::uint32_t>(nodes.size()));
  list.add_u32(PMIX_LOCAL_SIZE, static_cast<std::uint32_t>(local_ranks.size()));
  if (!local_ranks.empty()) {
    list.add_string(PMIX_LOCAL_PEERS, join_ranks(local_ranks));
    list.add_rank(PMIX_LOCALLDR, local_ranks.front());
  }
  if (Status maps = add_maps(job, nodes, list); !maps) return maps.error();
  if (Status apps = add_app_arrays(job, list); !apps) return apps.error();
  if (Status node_arrays = add_node_arrays(job, nodes, list); !node_arrays) {
    return node_arrays.error();
  }
  if (Status proc_arrays = add_proc_arrays(job, local_ranks, list); !proc_arrays)
    return proc_arrays.error();
  return list.take_array();
}

}  // namespace grove::pmix_internal
