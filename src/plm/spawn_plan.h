// Which daemon runs on which host, and who starts whom. Pure: the controller
// computes the plan once; with tree spawn every daemon reads its own share
// off the same plan (its children in the routing tree of the full DVM).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plm/host_list.h"
#include "rml/membership.h"
#include "util/result.h"

namespace grove {

struct PlannedDaemon {
  Vpid vpid = 0;
  HostEntry host;
  // Whether ranks may be placed here: the controller holds none when its host
  // is not in the host list (as `prte` with a remote-only hostfile).
  bool holds_ranks = true;
};

struct SpawnPlan {
  std::vector<PlannedDaemon> daemons;  // index = vpid; vpid 0 is the controller
  std::uint32_t radix = 64;
  bool tree_spawn = true;

  std::uint32_t size() const { return static_cast<std::uint32_t>(daemons.size()); }
  // The daemons `vpid` starts: its children in the routing tree of the whole
  // DVM with tree spawn, else everyone for the controller and no one for the rest.
  std::vector<Vpid> launches(Vpid vpid) const;
};

// vpid 0 is the controller on `controller_host`; if that host is in `hosts`
// (by name, or as localhost) it is vpid 0's entry, else vpid 0 holds no
// ranks. The other hosts take vpids 1.. in the order listed.
Result<SpawnPlan> plan_dvm(const std::vector<HostEntry>& hosts, const std::string& controller_host,
                           std::uint32_t radix, bool tree_spawn);

}  // namespace grove
