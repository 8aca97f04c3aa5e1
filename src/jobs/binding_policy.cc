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

void offset_host_ranks(JobMap& map, const std::vector<MapDaemon>& daemons,
                       std::uint32_t cores_per_rank, const HostCoresInUse& in_use) {
  const auto daemon_of = by_vpid(daemons);
  const std::uint64_t width = std::max<std::uint32_t>(1, cores_per_rank);
  for (RankPlacement& placement : map.ranks) {
    auto daemon = daemon_of.find(placement.daemon);
    if (daemon == daemon_of.end()) continue;
    auto used = in_use.find(daemon->second->hostname);
    if (used == in_use.end()) continue;
    const std::uint64_t skip = (used->second + width - 1) / width;
    placement.host_rank =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(UINT32_MAX, placement.host_rank + skip));
  }
}

}  // namespace grove
