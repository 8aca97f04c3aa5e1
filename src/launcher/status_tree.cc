// grove status --tree: the DVM's routing and release trees as they stand,
// each daemon with its host, state and round trip to the controller (in the
// spirit of `flux overlay status`).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>

#include "launcher/status_tree.h"
#include "rml/topology.h"
#include "rml/tree.h"

namespace grove {
namespace {

struct DaemonView {
  std::string host;
  std::string state;  // up, suspect, lost, stopped, launching, draining, removed
  std::uint64_t rtt_us = 0;
};

std::map<Vpid, DaemonView> daemon_views(const nlohmann::json& status) {
  std::map<Vpid, std::uint64_t> rtts;
  for (const auto& entry : status.value("counters", nlohmann::json::array()))
    rtts[entry["vpid"].get<Vpid>()] = entry.value("controller_rtt_us", std::uint64_t{0});
  const std::int64_t heartbeat_ms = status.value("heartbeat_ms", std::int64_t{0});
  std::map<Vpid, DaemonView> views;
  for (const auto& daemon : status["daemons"]) {
    Vpid vpid = daemon["vpid"].get<Vpid>();
    DaemonView view{daemon["host"].get<std::string>(), daemon["state"].get<std::string>(), 0};
    if (view.state == "failed") view.state = "lost";
    // Two heartbeats late is suspect; the controller declares it lost later
    // (daemon_heartbeat_misses).
    if (view.state == "up" && heartbeat_ms > 0 &&
        daemon.value("silent_ms", std::int64_t{0}) > 2 * heartbeat_ms) {
      view.state = "suspect";
    }
    if (auto found = rtts.find(vpid); found != rtts.end()) view.rtt_us = found->second;
    views[vpid] = view;
  }
  return views;
}

nlohmann::json tree_json(const Tree& tree) {
  nlohmann::json nodes = nlohmann::json::array();
  for (Vpid vpid : tree.members()) {
    auto parent = tree.parent(vpid);
    nodes.push_back({{"vpid", vpid},
                     {"parent", parent ? nlohmann::json(*parent) : nlohmann::json(nullptr)},
                     {"children", tree.children(vpid)},
                     {"depth", *tree.depth(vpid)},
                     {"promoted", tree.promoted(vpid)}});
  }
  return nodes;
}

void print_tree(const Tree& tree, const char* name, const std::map<Vpid, DaemonView>& views) {
  std::printf("%s tree, radix %u:\n", name, tree.radix());
  std::vector<std::pair<Vpid, int>> stack{{tree.root(), 0}};
  while (!stack.empty()) {
    auto [vpid, depth] = stack.back();
    stack.pop_back();
    const DaemonView& view = views.at(vpid);
    std::string state = view.state + (tree.promoted(vpid) ? ", promoted" : "");
    std::printf("%*s%u %s (%s)", depth * 2, "", vpid, view.host.c_str(), state.c_str());
    if (vpid != kControllerVpid && view.rtt_us > 0) {
      std::printf(" rtt %llu us", static_cast<unsigned long long>(view.rtt_us));
    }
    std::printf("\n");
    auto children = tree.children(vpid);
    for (auto child = children.rbegin(); child != children.rend(); ++child)
      stack.emplace_back(*child, depth + 1);
  }
}

}  // namespace

int print_status_tree(nlohmann::json status, bool json) {
  std::vector<Vpid> vpids;
  for (const auto& daemon : status["daemons"])
    vpids.push_back(daemon["vpid"].get<Vpid>());
  auto membership = Membership::create(vpids);
  if (!membership) {
    print_cli_error("the DVM's status lists no usable daemon set: " + membership.error().message);
    return 1;
  }
  std::vector<Vpid> failed = status["failed"].get<std::vector<Vpid>>();
  membership->adopt(status["epoch"].get<std::uint64_t>(), failed);
  const TopologyRadices radices{status["radix"].get<std::uint32_t>(),
                                status["radix2"].get<std::uint32_t>()};
  const Tree routing = derive_topology(*membership, TopologyKind::routing, radices);
  const Tree release = derive_topology(*membership, TopologyKind::release, radices);
  const auto views = daemon_views(status);
  if (json) {
    status["trees"] = {{"routing", tree_json(routing)}, {"release", tree_json(release)}};
    nlohmann::json states = nlohmann::json::object();
    for (const auto& [vpid, view] : views)
      states[std::to_string(vpid)] = {
          {"host", view.host}, {"state", view.state}, {"controller_rtt_us", view.rtt_us}};
    status["tree_states"] = states;
    std::cout << status.dump(2) << "\n";
    return 0;
  }
  std::printf("DVM: controller pid %d, %zu daemons, epoch %llu\n", status["pid"].get<int>(),
              vpids.size(), static_cast<unsigned long long>(membership->epoch()));
  print_tree(routing, "routing", views);
  std::printf("\n");
  print_tree(release, status["low_radix_release"].get<bool>() ? "release" : "release (unused)",
             views);
  // Out of the trees: lost, or removed by grove shrink (a hole).
  for (const char* kind : {"lost", "removed"}) {
    std::string line;
    for (Vpid vpid : failed) {
      const DaemonView& view = views.at(vpid);
      if ((view.state == "removed") != (std::string(kind) == "removed")) continue;
      line += " " + std::to_string(vpid) + " (" + view.host + ")";
    }
    if (!line.empty()) std::printf("\n%s:%s\n", kind, line.c_str());
  }
  return 0;
}

}  // namespace grove
