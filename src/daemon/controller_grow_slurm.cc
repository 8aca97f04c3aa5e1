// grove grow --activate at the controller: inside the Slurm allocation the
// DVM was started in, daemons on the nodes it does not use, started by one
// more srun step (one task per node, each joining at the next vpid in the
// allocation's order, as srun numbers them). A node whose daemon left (grove
// shrink, or lost from a grown step) gets one back at its old vpid, in a
// step of its own. They are admitted as grove grow --host's are
// (controller_grow.cc); dvm_respawn_lost starts its steps here too.
#include <cstdlib>

#include "daemon/controller.h"
#include "jobs/job_map.h"
#include "plm/slurm_allocation.h"
#include "plm/srun_launcher.h"
#include "util/text.h"

namespace grove {

Result<std::vector<Controller::ActivateTarget>> Controller::unused_allocation_nodes(
    const std::vector<std::string>& nodes) {
  auto allocation =
      allocation_hosts(read_slurm_environment([](const char* name) { return std::getenv(name); }));
  if (!allocation) return Error{"grove grow --activate: " + allocation.error().message};
  const std::string& controller_host = roster_->record(kControllerVpid).hostname;
  // The daemon a node has or had (one that never reported had no place: its
  // node is free again).
  auto daemon_on = [&](const std::string& node) -> std::optional<Vpid> {
    for (const DaemonRecord& daemon : roster_->records()) {
      if (roster_->ever_up(daemon.vpid) || daemon.state != DaemonStateKind::failed) {
        if (names_host(node, daemon.hostname, controller_host)) return daemon.vpid;
      }
    }
    return std::nullopt;
  };
  auto out = [this](Vpid vpid) {
    const DaemonStateKind state = roster_->record(vpid).state;
    return state == DaemonStateKind::failed || state == DaemonStateKind::removed;
  };
  for (const std::string& node : nodes) {
    bool allocated = false;
    for (const HostEntry& host : *allocation)
      allocated = allocated || names_host(node, host.name, controller_host);
    if (!allocated) {
      std::string list;
      for (const HostEntry& host : *allocation)
        list += (list.empty() ? "" : ",") + host.name;
      return Error{"--activate " + node + ": not a node of this allocation (" + list + ")"};
    }
    const std::optional<Vpid> vpid = daemon_on(node);
    if (!vpid) continue;
    if (!out(*vpid)) {
      return Error{"--activate " + node + ": " + roster_->describe(*vpid) + " is there already (" +
                   std::string(daemon_state_name(roster_->record(*vpid).state)) + ")"};
    }
    if (Status ready = may_return(*vpid); !ready)
      return Error{"--activate " + node + ": " + ready.error().message};
  }
  std::vector<ActivateTarget> chosen;  // in the allocation's order
  for (const HostEntry& host : *allocation) {
    const std::optional<Vpid> vpid = daemon_on(host.name);
    // Unnamed, a node whose daemon is leaving or may still run waits for a later grow.
    if (vpid && (!out(*vpid) || !may_return(*vpid))) continue;
    bool named = nodes.empty();
    for (const std::string& node : nodes)
      named = named || names_host(node, host.name, controller_host);
    if (named) chosen.push_back({host, vpid});
  }
  if (chosen.empty()) {
    return Error{"grove grow --activate: every node of the allocation (" +
                 std::to_string(allocation->size()) + ") runs a daemon of this DVM already"};
  }
  return chosen;
}

Result<std::vector<Vpid>> Controller::grow_activate(const std::vector<std::string>& nodes) {
  if (!options_.plan || options_.launcher != RemoteLauncherKind::slurm) {
    return Error{
        "grove grow --activate grows a DVM started inside a Slurm allocation (grove start under "
        "salloc or sbatch); this one was not: use --host/--hostfile or --local N"};
  }
  if (split_words(params_.get_string("plm_slurm_srun")).empty())
    return Error{"plm_slurm_srun is empty"};
  auto chosen = unused_allocation_nodes(nodes);
  if (!chosen) return chosen.error();
  SpawnPlan& plan = *options_.plan;
  std::vector<Vpid> fresh;
  std::vector<Vpid> launched;
  for (const ActivateTarget& target : *chosen) {
    if (target.back) {
      // Back at its old vpid, in a step of its own (srun numbers a step's
      // nodes from 0: its vpid is the step's first).
      roster_->revive(*target.back);
      start_srun_step({*target.back});
      launched.push_back(*target.back);
      continue;
    }
    const Vpid vpid = roster_->add_daemons(1, target.host.name).front();
    roster_->planned(vpid, target.host.name, target.host.slots, true);
    plan.daemons.push_back(PlannedDaemon{vpid, target.host, true});
    fresh.push_back(vpid);
  }
  // The newcomers' vpids follow each other, in the allocation's order: one step.
  if (!fresh.empty()) start_srun_step(fresh);
  launched.insert(launched.end(), fresh.begin(), fresh.end());
  std::erase_if(launched, [this](Vpid vpid) {
    return roster_->record(vpid).state != DaemonStateKind::launching;
  });
  if (launched.empty()) return Error{"no daemon could be started (see grove log)"};
  return launched;
}

void Controller::start_srun_step(const std::vector<Vpid>& vpids) {
  SrunLaunchConfig config;
  config.srun = split_words(params_.get_string("plm_slurm_srun"));
  config.extra_args = split_words(params_.get_string("plm_slurm_args"));
  config.param_arguments = remote_param_arguments();
  config.bootstrap = Bootstrap{identity_.secret, *options_.plan, remote_settings()};
  config.bootstrap.plan->tree_spawn = false;
  config.first_vpid = vpids.front();
  config.count = static_cast<std::uint32_t>(vpids.size());
  config.joining = true;
  SrunLauncher::Hooks hooks;
  hooks.on_exit = [this, vpids](const std::string& how, const std::string& last_lines) {
    // Daemons that were up are lost as their connections close; those still
    // starting are lost here, with srun's words.
    if (stopping_.sequence.stopping()) return;
    for (Vpid vpid : vpids) {
      if (roster_->record(vpid).state == DaemonStateKind::launching)
        daemon_lost(vpid, "its Slurm step ended (" + how + "); its last lines:" + last_lines);
    }
    finish_growth();
  };
  auto srun =
      std::make_unique<SrunLauncher>(loop_->base(), log_, std::move(config), std::move(hooks));
  if (auto started = srun->start(); !started) {
    for (Vpid vpid : vpids)
      daemon_lost(vpid, started.error().message);
    return;
  }
  remote_.add(std::move(srun));
  log_.notice("daemon", "starting %zu daemon(s) in an srun step of their own", vpids.size());
}

}  // namespace grove
