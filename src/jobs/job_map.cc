#include "jobs/job_map.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/text.h"

namespace grove {

namespace {
Result<MapSpec> parse_placement(const std::string& text) {
  if (text == "slot" || text == "core") return MapSpec{MapPolicy::slot, 0};
  if (text == "node") return MapSpec{MapPolicy::node, 0};
  const std::string prefix = "ppr:";
  for (const auto& [suffix, policy] : {std::pair<std::string, MapPolicy>{":node", MapPolicy::ppr},
                                       {":socket", MapPolicy::ppr_socket}}) {
    if (text.size() > prefix.size() + suffix.size() && text.rfind(prefix, 0) == 0 &&
        text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0) {
      auto count =
          parse_int(text.substr(prefix.size(), text.size() - prefix.size() - suffix.size()));
      if (count && *count >= 1 && *count <= 65535) {
        return MapSpec{policy, static_cast<std::uint32_t>(*count)};
      }
    }
  }
  return Error{"--map-by '" + text +
               "': expected slot, node, ppr:N:node or ppr:N:socket (N from 1 to 65535), "
               "optionally followed by :pe=K"};
}
}  // namespace

Result<MapSpec> parse_map_policy(const std::string& text) {
  // Open MPI spells it :PE=K too.
  std::string lower = text;
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t pe_at = lower.rfind(":pe=");
  auto spec = parse_placement(text.substr(0, pe_at));
  if (!spec) return spec.error();
  if (pe_at != std::string::npos) {
    auto cores = parse_int(text.substr(pe_at + 4));
    if (!cores || *cores < 1 || *cores > 4096) {
      return Error{"--map-by '" + text + "': pe=K wants K cores per rank, from 1 to 4096"};
    }
    spec->pe = static_cast<std::uint32_t>(*cores);
  }
  return spec;
}

Result<RankBy> parse_rank_by(const std::string& text) {
  if (text == "slot" || text == "core") return RankBy::slot;
  if (text == "node") return RankBy::node;
  return Error{"--rank-by '" + text + "': expected slot or node"};
}

namespace {
std::string placement_text(MapSpec spec) {
  switch (spec.policy) {
    case MapPolicy::slot:
      return "slot";
    case MapPolicy::node:
      return "node";
    case MapPolicy::ppr:
      return "ppr:" + std::to_string(spec.per_node) + ":node";
    case MapPolicy::ppr_socket:
      return "ppr:" + std::to_string(spec.per_node) + ":socket";
  }
  return "slot";
}

// A host's slots in ranks: K of them per rank with :pe=K (at least one).
std::uint64_t rank_slots(std::uint32_t slots, MapSpec spec) {
  return std::max<std::uint64_t>(1, std::max<std::uint32_t>(1, slots) / spec.pe);
}
}  // namespace

std::string map_policy_text(MapSpec spec) {
  return placement_text(spec) + (spec.pe > 1 ? ":pe=" + std::to_string(spec.pe) : "");
}

std::uint32_t max_ranks_for_open_files(std::uint64_t open_files) {
  if (open_files == 0) return kMaxRanksPerDaemon;  // not known: only the numbering bounds it
  if (open_files <= kDescriptorsKept) return 1;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(
      kMaxRanksPerDaemon, (open_files - kDescriptorsKept) / kDescriptorsPerRank));
}

std::uint32_t ranks_to_fill(const std::vector<MapDaemon>& daemons, MapSpec spec) {
  std::uint64_t ranks = 0;
  if (spec.policy == MapPolicy::ppr) {
    ranks = std::uint64_t{spec.per_node} * daemons.size();
  } else if (spec.policy == MapPolicy::ppr_socket) {
    for (const MapDaemon& daemon : daemons)
      ranks += std::uint64_t{spec.per_node} * std::max<std::uint32_t>(1, daemon.sockets);
  } else {
    std::map<std::string, std::uint64_t> host_slots;  // daemons sharing a host share its slots
    for (const MapDaemon& daemon : daemons) {
      std::uint64_t& slots = host_slots[daemon.hostname];
      slots = std::max<std::uint64_t>(slots, rank_slots(daemon.slots, spec));
    }
    for (const auto& [host, slots] : host_slots)
      ranks += slots;
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(ranks, UINT32_MAX));
}

bool names_host(const std::string& wanted, const std::string& hostname,
                const std::string& local_host) {
  auto short_name = [](const std::string& name) {
    const bool address = name.find_first_not_of("0123456789.") == std::string::npos;
    return address ? name : name.substr(0, name.find('.'));
  };
  const bool local = wanted == "localhost" || wanted == "127.0.0.1";
  const std::string& named = local ? local_host : wanted;
  return hostname == named || short_name(hostname) == short_name(named);
}

Result<std::vector<MapDaemon>> restrict_to_hosts(const std::vector<MapDaemon>& daemons,
                                                 const std::vector<HostChoice>& hosts,
                                                 const std::string& local_host) {
  auto names = [&](const HostChoice& host, const MapDaemon& daemon) {
    return names_host(host.name, daemon.hostname, local_host);
  };
  std::vector<MapDaemon> chosen;
  for (const MapDaemon& daemon : daemons) {
    for (const HostChoice& host : hosts) {
      if (!names(host, daemon)) continue;
      MapDaemon entry = daemon;
      if (host.slots != 0) entry.slots = host.slots;
      chosen.push_back(entry);
      break;
    }
  }
  for (const HostChoice& host : hosts) {
    if (std::any_of(daemons.begin(), daemons.end(),
                    [&](const MapDaemon& daemon) { return names(host, daemon); }))
      continue;
    std::set<std::string> known;
    for (const MapDaemon& daemon : daemons)
      known.insert(daemon.hostname);
    std::string list;
    for (const std::string& name : known)
      list += (list.empty() ? "" : ", ") + name;
    return Error{"--host " + host.name + ": no daemon of this DVM runs there (its hosts: " +
                 (list.empty() ? std::string("none living") : list) + ")"};
  }
  return chosen;
}

Status check_core_overload(const JobMap& map, const std::vector<MapDaemon>& daemons,
                           std::uint32_t cores_per_rank) {
  std::map<Vpid, const MapDaemon*> by_vpid;
  for (const MapDaemon& daemon : daemons)
    by_vpid[daemon.vpid] = &daemon;
  std::map<std::string, std::uint64_t> ranks_on,
      cores_of;  // by host: daemons sharing one bind within it
  for (const RankPlacement& placement : map.ranks) {
    auto daemon = by_vpid.find(placement.daemon);
    if (daemon == by_vpid.end()) continue;
    ++ranks_on[daemon->second->hostname];
    std::uint64_t& cores = cores_of[daemon->second->hostname];
    cores = std::max<std::uint64_t>(cores, daemon->second->cores);
  }
  for (const auto& [host, ranks] : ranks_on) {
    const std::uint64_t cores = cores_of[host];
    if (cores == 0 || ranks * cores_per_rank <= cores) continue;
    return Error{"--bind-to core: host " + host + " would bind " + std::to_string(ranks) +
                 " ranks" +
                 (cores_per_rank > 1 ? " of " + std::to_string(cores_per_rank) + " cores each"
                                     : std::string()) +
                 " to its " + std::to_string(cores) +
                 " cores; --bind-to core:overload-allowed lets them share, --bind-to none "
                 "leaves them unbound"};
  }
  return ok_status();
}

namespace {
// The same ranks per daemon, numbered again: by slot, each daemon's ranks
// contiguous in vpid order; by node, one per daemon in turn while it has
// ranks left.
std::vector<Vpid> renumbered(const std::vector<Vpid>& owner, const std::vector<MapDaemon>& daemons,
                             RankBy rank_by) {
  std::map<Vpid, std::uint32_t> left;
  for (Vpid vpid : owner)
    ++left[vpid];
  std::vector<Vpid> order;
  for (const MapDaemon& daemon : daemons) {
    if (left.count(daemon.vpid) != 0) order.push_back(daemon.vpid);
  }
  std::vector<Vpid> numbered;
  numbered.reserve(owner.size());
  if (rank_by == RankBy::slot) {
    for (Vpid vpid : order)
      numbered.insert(numbered.end(), left[vpid], vpid);
    return numbered;
  }
  while (numbered.size() < owner.size()) {
    for (Vpid vpid : order) {
      if (left[vpid] == 0) continue;
      --left[vpid];
      numbered.push_back(vpid);
    }
  }
  return numbered;
}

// ppr:N:socket: N for every socket of a daemon's host.
std::uint64_t socket_room(const MapDaemon& daemon, MapSpec spec) {
  return std::uint64_t{spec.per_node} * std::max<std::uint32_t>(1, daemon.sockets);
}

// ppr never wraps: an error if np ranks do not fit N per node (or socket).
Status check_ppr_room(std::uint32_t np, const std::vector<MapDaemon>& daemons, MapSpec spec) {
  if (spec.policy == MapPolicy::ppr) {
    const std::uint64_t room = std::uint64_t{spec.per_node} * daemons.size();
    if (np > room) {
      return Error{"--map-by ppr:" + std::to_string(spec.per_node) + ":node places at most " +
                   std::to_string(room) + " ranks on " + std::to_string(daemons.size()) +
                   " daemons; -n is " + std::to_string(np)};
    }
  }
  if (spec.policy == MapPolicy::ppr_socket) {
    std::uint64_t room = 0;
    for (const auto& daemon : daemons)
      room += socket_room(daemon, spec);
    if (np > room) {
      return Error{"--map-by ppr:" + std::to_string(spec.per_node) + ":socket places at most " +
                   std::to_string(room) + " ranks on the sockets of " +
                   std::to_string(daemons.size()) + " daemons; -n is " + std::to_string(np)};
    }
  }
  return ok_status();
}

// Fill every daemon's slots in vpid order; ranks beyond the slots go one
// per daemon in turn. Each daemon's ranks are contiguous.
std::vector<Vpid> fill_slots(std::uint32_t np, const std::vector<MapDaemon>& daemons,
                             MapSpec spec) {
  std::vector<std::uint32_t> counts(daemons.size(), 0);
  std::uint32_t placed = 0;
  for (std::size_t i = 0; i < daemons.size() && placed < np; ++i) {
    counts[i] = static_cast<std::uint32_t>(
        std::min<std::uint64_t>(rank_slots(daemons[i].slots, spec), np - placed));
    placed += counts[i];
  }
  for (std::size_t i = 0; placed < np; i = (i + 1) % daemons.size()) {
    ++counts[i];
    ++placed;
  }
  std::vector<Vpid> owner(np);
  std::uint32_t rank = 0;
  for (std::size_t i = 0; i < daemons.size(); ++i) {
    for (std::uint32_t n = 0; n < counts[i]; ++n)
      owner[rank++] = daemons[i].vpid;
  }
  return owner;
}

// Each rank's daemon, in rank order, as the policy places them.
std::vector<Vpid> place_ranks(std::uint32_t np, const std::vector<MapDaemon>& daemons,
                              MapSpec spec) {
  std::vector<Vpid> owner(np);
  if (spec.policy == MapPolicy::node) {
    for (std::uint32_t rank = 0; rank < np; ++rank)
      owner[rank] = daemons[rank % daemons.size()].vpid;
  } else if (spec.policy == MapPolicy::ppr) {
    for (std::uint32_t rank = 0; rank < np; ++rank)
      owner[rank] = daemons[rank / spec.per_node].vpid;
  } else if (spec.policy == MapPolicy::ppr_socket) {
    std::uint32_t rank = 0;
    for (std::size_t i = 0; i < daemons.size() && rank < np; ++i) {
      for (std::uint64_t n = 0; n < socket_room(daemons[i], spec) && rank < np; ++n)
        owner[rank++] = daemons[i].vpid;
    }
  } else {
    owner = fill_slots(np, daemons, spec);
  }
  return owner;
}

// An error naming the first daemon given more ranks than it can host.
Status check_rank_limits(std::uint32_t np, const std::vector<Vpid>& owner,
                         const std::vector<MapDaemon>& daemons) {
  std::map<Vpid, std::uint32_t> hosted;
  for (Vpid vpid : owner)
    ++hosted[vpid];
  for (const MapDaemon& daemon : daemons) {
    auto count = hosted.find(daemon.vpid);
    if (count == hosted.end() || count->second <= daemon.max_ranks) continue;
    return Error{"the job of " + std::to_string(np) + " ranks would put " +
                 std::to_string(count->second) + " on daemon " + std::to_string(daemon.vpid) +
                 " (" + daemon.hostname + "), which can host at most " +
                 std::to_string(daemon.max_ranks) + " ranks of a job (" +
                 (daemon.max_ranks == kMaxRanksPerDaemon
                      ? std::string("local ranks are numbered in 16 bits")
                      : "its open-file limit, " + std::to_string(kDescriptorsPerRank) +
                            " per rank: raise ulimit -n where the DVM starts") +
                 "); use more daemons, or fewer ranks"};
  }
  return ok_status();
}

// The daemons hosting at least one rank, ascending.
std::vector<Vpid> hosting_daemons(const std::vector<Vpid>& owner) {
  const std::set<Vpid> hosting(owner.begin(), owner.end());
  return {hosting.begin(), hosting.end()};
}

// The slots of each hosting daemon, as placed (parallel to `hosting`).
std::vector<std::uint32_t> placed_node_slots(const std::vector<Vpid>& hosting,
                                             const std::vector<MapDaemon>& daemons, MapSpec spec) {
  std::vector<std::uint32_t> slots;
  for (Vpid vpid : hosting) {
    auto daemon = std::find_if(daemons.begin(), daemons.end(),
                               [&](const MapDaemon& d) { return d.vpid == vpid; });
    auto node_slots = static_cast<std::uint32_t>(rank_slots(daemon->slots, spec));
    // ppr: the user asked for N per node, whatever the slots.
    if (spec.policy == MapPolicy::ppr) node_slots = std::max(node_slots, spec.per_node);
    if (spec.policy == MapPolicy::ppr_socket)
      node_slots = std::max<std::uint32_t>(node_slots,
                                           static_cast<std::uint32_t>(socket_room(*daemon, spec)));
    slots.push_back(node_slots);
  }
  return slots;
}

std::map<Vpid, std::string> hosts_by_vpid(const std::vector<MapDaemon>& daemons) {
  std::map<Vpid, std::string> host_of;
  for (const MapDaemon& daemon : daemons)
    host_of[daemon.vpid] = daemon.hostname;
  return host_of;
}

// Whether a host gets more ranks than its slots, or than its cores with :pe=K.
// Per host: daemons that share one share its cores (each reports them all).
bool hosts_oversubscribed(const std::vector<Vpid>& owner, const std::vector<MapDaemon>& daemons,
                          MapSpec spec) {
  std::map<Vpid, std::string> host_of = hosts_by_vpid(daemons);
  std::map<std::string, std::uint64_t> host_slots, host_ranks;
  for (const MapDaemon& daemon : daemons) {
    std::uint64_t& room = host_slots[daemon.hostname];
    room = std::max<std::uint64_t>(room, rank_slots(daemon.slots, spec));
  }
  for (Vpid vpid : owner)
    ++host_ranks[host_of[vpid]];
  // In cores: one rank of :pe=8 on a 2-slot host is oversubscribed too.
  std::map<std::string, std::uint64_t> host_cores;
  for (const MapDaemon& daemon : daemons) {
    std::uint64_t& room = host_cores[daemon.hostname];
    room = std::max<std::uint64_t>(room, std::max<std::uint32_t>(1, daemon.slots));
  }
  bool oversubscribed = false;
  for (const auto& [host, count] : host_ranks) {
    oversubscribed =
        oversubscribed || count > host_slots[host] || count * spec.pe > host_cores[host];
  }
  return oversubscribed;
}
}  // namespace

Result<JobMap> map_ranks(std::uint32_t np, const std::vector<MapDaemon>& daemons, MapSpec spec) {
  if (daemons.empty()) return Error{"no living daemon to run on"};
  if (np == 0) return Error{"-n must be at least 1"};
  if (Status room = check_ppr_room(np, daemons, spec); !room) return room.error();
  std::vector<Vpid> owner = place_ranks(np, daemons, spec);
  if (spec.rank_by != RankBy::as_mapped) owner = renumbered(owner, daemons, spec.rank_by);
  // Before anything is numbered: a daemon's ranks fit its limit.
  if (Status fits = check_rank_limits(np, owner, daemons); !fits) return fits.error();
  JobMap map;
  map.daemons = hosting_daemons(owner);
  map.node_slots = placed_node_slots(map.daemons, daemons, spec);
  // ppr: the user asked for N per node (or socket), whatever the slots.
  if (spec.policy == MapPolicy::slot || spec.policy == MapPolicy::node) {
    map.oversubscribed = hosts_oversubscribed(owner, daemons, spec);
  }
  std::map<Vpid, std::string> host_of = hosts_by_vpid(daemons);
  std::map<Vpid, std::uint16_t> local_count;
  std::map<std::string, std::uint32_t> host_count;
  for (std::uint32_t rank = 0; rank < np; ++rank) {
    Vpid vpid = owner[rank];
    auto node = static_cast<std::uint32_t>(
        std::lower_bound(map.daemons.begin(), map.daemons.end(), vpid) - map.daemons.begin());
    std::uint16_t local = local_count[vpid]++;
    map.ranks.push_back(RankPlacement{rank, vpid, local, local, node, host_count[host_of[vpid]]++});
  }
  return map;
}

}  // namespace grove
