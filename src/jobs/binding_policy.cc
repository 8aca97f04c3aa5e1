#include "jobs/binding_policy.h"

#include <algorithm>

namespace grove {

namespace {
std::map<Vpid, const MapDaemon*> by_vpid(const std::vector<MapDaemon>& daemons) {
  std::map<Vpid, const MapDaemon*> found;
  for (const MapDaemon& daemon : daemons)
    found[daemon.vpid] = &daemon;
  return found;
}
}  // namespace

std::string default_binding(const JobMap& map, const std::vector<MapDaemon>& daemons,
                            const MapSpec& spec, const HostCoresInUse& in_use) {
  const auto daemon_of = by_vpid(daemons);
  std::map<std::string, std::uint64_t> wanted, cores;
  for (const RankPlacement& placement : map.ranks) {
    auto daemon = daemon_of.find(placement.daemon);
    if (daemon == daemon_of.end()) continue;
    const MapDaemon& host = *daemon->second;
    wanted[host.hostname] += spec.pe;
    // Daemons sharing a host each report all of it.
    std::uint64_t& room = cores[host.hostname];
    room = std::max<std::uint64_t>(
        room, host.cores != 0 ? host.cores : std::max<std::uint32_t>(1, host.slots));
  }
  for (const auto& [host, count] : wanted) {
    auto used = in_use.find(host);
    const std::uint64_t taken = used == in_use.end() ? 0 : used->second;
    if (count + taken > cores[host]) return "none";  // sharing: let the kernel balance
  }
  if (spec.pe > 1 || map.ranks.size() <= 2) return "core";
  return "socket";
}

void place_on_free_cores(JobMap& map, const std::vector<MapDaemon>& daemons,
                         std::uint32_t cores_per_rank, const HostCoresTaken& taken) {
  const auto daemon_of = by_vpid(daemons);
  const std::uint64_t width = std::max<std::uint32_t>(1, cores_per_rank);
  HostCoresTaken held = taken;  // and this job's, as they are placed
  std::map<std::string, std::uint64_t> cores;
  for (const MapDaemon& daemon : daemons) {
    std::uint64_t& count = cores[daemon.hostname];
    count = std::max<std::uint64_t>(count, daemon.cores);
  }
  for (RankPlacement& placement : map.ranks) {
    auto daemon = daemon_of.find(placement.daemon);
    if (daemon == daemon_of.end()) continue;
    const std::string& host = daemon->second->hostname;
    std::set<std::uint32_t>& used = held[host];
    const std::uint64_t limit = cores[host];
    if (limit == 0 && used.empty()) continue;  // nothing known, nothing to avoid
    auto free_from = [&](std::uint64_t first) {
      for (std::uint64_t core = first; core < first + width; ++core) {
        if (used.count(static_cast<std::uint32_t>(core)) != 0) return false;
      }
      return true;
    };
    const std::uint64_t end = limit != 0 ? limit : (used.empty() ? 0 : *used.rbegin() + 1 + width);
    for (std::uint64_t first = 0; first + width <= end; first += width) {
      if (!free_from(first)) continue;
      placement.host_rank = static_cast<std::uint32_t>(first / width);
      for (std::uint64_t core = first; core < first + width; ++core)
        used.insert(static_cast<std::uint32_t>(core));
      break;
    }
  }
}

}  // namespace grove
