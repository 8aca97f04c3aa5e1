#include "plm/slurm_allocation.h"

#include <charconv>

#include "plm/slurm_hostlist.h"

namespace grove {
namespace {

std::string first_set(const std::function<const char*(const char*)>& lookup,
                      std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const char* value = lookup(name); value != nullptr && *value != '\0') return value;
  }
  return {};
}

bool parse_count(std::string_view text, std::uint32_t& value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace

SlurmEnvironment read_slurm_environment(const std::function<const char*(const char*)>& lookup) {
  return SlurmEnvironment{first_set(lookup, {"SLURM_JOB_ID", "SLURM_JOBID"}),
                          first_set(lookup, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}),
                          first_set(lookup, {"SLURM_JOB_CPUS_PER_NODE"})};
}

Result<std::vector<std::uint32_t>> parse_cpus_per_node(std::string_view text, std::size_t nodes) {
  std::vector<std::uint32_t> cpus;
  const std::string quoted = "SLURM_JOB_CPUS_PER_NODE '" + std::string(text) + "'";
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    std::string_view item = text.substr(start, comma - start);
    std::uint32_t count = 0, repeat = 1;
    if (const auto open = item.find('('); open != std::string_view::npos) {
      // "N(xM)": M nodes with N CPUs each.
      if (item.size() < open + 4 || item.substr(open, 2) != "(x" || item.back() != ')' ||
          !parse_count(item.substr(open + 2, item.size() - open - 3), repeat) || repeat == 0) {
        return Error{quoted + ": '" + std::string(item) + "' is not N or N(xM)"};
      }
      item = item.substr(0, open);
    }
    if (!parse_count(item, count) || count == 0) {
      return Error{quoted + ": '" + std::string(item) + "' is not a CPU count"};
    }
    if (cpus.size() + repeat > nodes) {
      return Error{quoted + " names more nodes than the " + std::to_string(nodes) +
                   " in the node list"};
    }
    cpus.insert(cpus.end(), repeat, count);
    start = comma + 1;
  }
  if (cpus.size() != nodes) {
    return Error{quoted + " names " + std::to_string(cpus.size()) + " nodes, the node list " +
                 std::to_string(nodes)};
  }
  return cpus;
}

Result<std::vector<HostEntry>> allocation_hosts(const SlurmEnvironment& environment) {
  if (!environment.in_allocation()) {
    return Error{"not inside a Slurm allocation (SLURM_JOB_ID is not set)"};
  }
  if (environment.nodelist.empty()) {
    return Error{"Slurm job " + environment.job_id + ": SLURM_JOB_NODELIST is not set"};
  }
  auto names = expand_slurm_hostlist(environment.nodelist);
  if (!names) return Error{"SLURM_JOB_NODELIST: " + names.error().message};
  std::vector<std::uint32_t> cpus;
  if (!environment.cpus_per_node.empty()) {
    auto parsed = parse_cpus_per_node(environment.cpus_per_node, names->size());
    if (!parsed) return parsed.error();
    cpus = std::move(*parsed);
  }
  std::vector<HostEntry> hosts;
  for (std::size_t i = 0; i < names->size(); ++i) {
    HostEntry host{(*names)[i], "", std::nullopt, std::nullopt};
    if (!cpus.empty()) host.slots = cpus[i];
    hosts.push_back(std::move(host));
  }
  return hosts;
}

Result<std::vector<HostEntry>> select_from_allocation(const std::vector<HostEntry>& allocation,
                                                      const std::vector<HostEntry>& listed) {
  std::vector<HostEntry> selected;
  std::vector<bool> taken(allocation.size(), false);
  for (const HostEntry& want : listed) {
    std::size_t at = 0;
    while (at < allocation.size() && allocation[at].name != want.name)
      ++at;
    if (at == allocation.size()) {
      return Error{"host '" + want.name + "' is not in the Slurm allocation"};
    }
    if (!want.user.empty()) {
      return Error{"host '" + want.ssh_target() + "': a user@ does not apply to Slurm's launcher"};
    }
    taken[at] = true;
  }
  for (std::size_t at = 0; at < allocation.size(); ++at) {
    if (!taken[at]) continue;
    HostEntry host = allocation[at];
    for (const HostEntry& want : listed) {
      if (want.name != host.name) continue;
      if (want.slots) host.slots = want.slots;
      if (want.max_slots) host.max_slots = want.max_slots;
    }
    selected.push_back(std::move(host));
  }
  return selected;
}

Result<std::uint32_t> vpid_from_slurm(std::uint32_t base, const char* slurm_node_id) {
  std::uint32_t node = 0;
  if (slurm_node_id == nullptr) {
    return Error{"--vpid-from-slurm: SLURM_NODEID is not set (not started by srun?)"};
  }
  if (!parse_count(slurm_node_id, node) || node > 0x7fffffffU - base) {
    return Error{"--vpid-from-slurm: SLURM_NODEID '" + std::string(slurm_node_id) +
                 "' is not a node number"};
  }
  return base + node;
}

}  // namespace grove
