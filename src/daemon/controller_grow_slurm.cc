// grove grow --activate at the controller: inside the Slurm allocation the
// DVM was started in, daemons on the nodes it does not use yet, started by
// one more srun step (one task per node, each joining at the next vpid in
// the allocation's order, as srun numbers them). They are admitted as
// grove grow --host's are (controller_grow.cc).
#include <cstdlib>

#include "daemon/controller.h"
#include "jobs/job_map.h"
#include "plm/slurm_allocation.h"
#include "plm/srun_launcher.h"
#include "util/text.h"

namespace grove {

Result<std::vector<HostEntry>> Controller::unused_allocation_nodes(
    const std::vector<std::string>& nodes) {
  auto allocation =
      allocation_hosts(read_slurm_environment([](const char* name) { return std::getenv(name); }));
  if (!allocation) return Error{"grove grow --activate: " + allocation.error().message};
  const std::string& controller_host = roster_->record(kControllerVpid).hostname;
  // A node whose daemon was lost or removed counts as used: under Slurm it
  // cannot come back at its old vpid yet. One whose daemon never reported
  // (its step failed) is free again.
  auto daemon_on = [&](const std::string& node) -> std::optional<Vpid> {
    for (const DaemonRecord& daemon : roster_->records()) {
      const bool never_ran =
          daemon.state == DaemonStateKind::failed && !roster_->ever_up(daemon.vpid);
      if (!never_ran && names_host(node, daemon.hostname, controller_host)) return daemon.vpid;
    }
    return std::nullopt;
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
    if (auto vpid = daemon_on(node)) {
      return Error{"--activate " + node + ": " + roster_->describe(*vpid) + " is there already (" +
                   std::string(daemon_state_name(roster_->record(*vpid).state)) + ")"};
    }
  }
  std::vector<HostEntry> chosen;  // in the allocation's order
  for (const HostEntry& host : *allocation) {
    if (daemon_on(host.name)) continue;
    bool named = nodes.empty();
    for (const std::string& node : nodes)
      named = named || names_host(node, host.name, controller_host);
    if (named) chosen.push_back(host);
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
  std::vector<Vpid> vpids;
  for (const HostEntry& host : *chosen) {
    const Vpid vpid = roster_->add_daemons(1, host.name).front();
    roster_->planned(vpid, host.name, host.slots, true);
    plan.daemons.push_back(PlannedDaemon{vpid, host, true});
    vpids.push_back(vpid);
  }
  SrunLaunchConfig config;
  config.srun = split_words(params_.get_string("plm_slurm_srun"));
  config.extra_args = split_words(params_.get_string("plm_slurm_args"));
  config.param_arguments = remote_param_arguments();
  config.bootstrap = Bootstrap{identity_.secret, plan, remote_settings()};
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
    return started.error();
  }
  remote_.add(std::move(srun));
  log_.notice("daemon", "grove grow --activate: starting %zu daemon(s) in one srun step",
              vpids.size());
  return vpids;
}

}  // namespace grove
