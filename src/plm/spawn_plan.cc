#include "plm/spawn_plan.h"

#include <numeric>

#include "rml/tree.h"

namespace grove {

namespace {
bool names_controller(const HostEntry& host, const std::string& controller_host) {
  return host.name == controller_host || host.name == "localhost" || host.name == "127.0.0.1";
}
}  // namespace

std::vector<Vpid> SpawnPlan::launches(Vpid vpid) const {
  if (vpid >= size()) return {};
  if (!tree_spawn) {
    if (vpid != kControllerVpid) return {};
    std::vector<Vpid> everyone(size() - 1);
    std::iota(everyone.begin(), everyone.end(), Vpid{1});
    return everyone;
  }
  std::vector<Vpid> vpids(size());
  std::iota(vpids.begin(), vpids.end(), Vpid{0});
  auto membership = Membership::create(std::move(vpids));
  return Tree::derive(*membership, radix).children(vpid);
}

Result<SpawnPlan> plan_dvm(const std::vector<HostEntry>& hosts, const std::string& controller_host,
                           std::uint32_t radix, bool tree_spawn) {
  if (radix < 2) return Error{"the routing radix must be at least 2"};
  SpawnPlan plan;
  plan.radix = radix;
  plan.tree_spawn = tree_spawn;
  PlannedDaemon controller{kControllerVpid,
                           HostEntry{controller_host, "", std::nullopt, std::nullopt}, false};
  std::vector<PlannedDaemon> others;
  for (const HostEntry& host : hosts) {
    if (!controller.holds_ranks && names_controller(host, controller_host)) {
      controller.host = host;
      controller.host.name = controller_host;
      controller.holds_ranks = true;
      continue;
    }
    if (names_controller(host, controller_host)) {
      return Error{"host '" + host.name + "' is listed twice (as this host)"};
    }
    others.push_back(PlannedDaemon{static_cast<Vpid>(others.size() + 1), host, true});
  }
  plan.daemons.push_back(std::move(controller));
  for (auto& daemon : others)
    plan.daemons.push_back(std::move(daemon));
  return plan;
}

}  // namespace grove
