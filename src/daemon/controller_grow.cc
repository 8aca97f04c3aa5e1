// grove grow at the controller: more daemons join the running DVM. Each is
// started on this host or over ssh (--join), reports like any daemon, and
// is admitted:
// every daemon learns its endpoint, the engine declares it in a new epoch
// (a join: the trees take it in as the return of a vpid that was always
// there), and its welcome carries its engine's seed. Jobs started afterwards
// may use it; running ones are not touched. A host whose daemon was lost
// gets one back at the old vpid: the same admission, a return in the engine.
#include <signal.h>

#include <algorithm>

#include "daemon/controller.h"
#include "daemon/host_info.h"
#include "grpcomm/join_seed.h"
#include "plm/local_launcher.h"
#include "plm/ssh_launcher.h"
#include "util/text.h"

namespace grove {

namespace {
// A joiner that has not reported by then is given up (as at the start).
constexpr std::int64_t kJoinDeadlineMs = 30'000;
}  // namespace

void Controller::request_grow(const GrowRequest& request, ReplyFn reply) {
  if (launch_.supervisor.phase() != LaunchSupervisor::Phase::ready ||
      stopping_.sequence.stopping()) {
    reply(error_reply("the DVM is not running: it cannot grow now"));
    return;
  }
  if (launch_.growth) {
    reply(error_reply("another grove grow is still under way"));
    return;
  }
  Result<std::vector<Vpid>> started = request.activate         ? grow_activate(request.nodes)
                                      : !request.hosts.empty() ? grow_hosts(request.hosts)
                                                               : grow_local(request.local);
  if (!started) {
    reply(error_reply(started.error().message));
    return;
  }
  launch_.growth = Growth{std::move(reply), std::move(*started), {}};
  if (!launch_.grow_deadline)
    launch_.grow_deadline = Timer(loop_->base(), [this] { grow_overdue(); });
  launch_.grow_deadline.arm(kJoinDeadlineMs);
  finish_growth();  // none could be started: answer at once
}

Result<std::vector<Vpid>> Controller::grow_local(std::uint32_t count) {
  if (options_.plan) {
    return Error{
        "grove grow --local grows a DVM started on this host (grove start --local); this one "
        "was started on a host list: name hosts with --host or --hostfile"};
  }
  const std::vector<Vpid> added =
      roster_->add_daemons(count, roster_->record(kControllerVpid).hostname);
  for (Vpid vpid : added)
    start_local_joiner(vpid);
  std::vector<Vpid> waiting;
  for (Vpid vpid : added) {
    if (roster_->record(vpid).state == DaemonStateKind::launching) waiting.push_back(vpid);
  }
  log_.notice("daemon", "grove grow: starting %zu daemon(s) on this host", waiting.size());
  return waiting;
}

void Controller::start_local_joiner(Vpid vpid) {
  const std::string groved = options_.groved_path.empty() ? find_groved() : options_.groved_path;
  auto directory = create_daemon_directory(identity_.dvm.directory, vpid);
  Result<int> pid = directory ? Result<int>(0) : Result<int>(directory.error());
  if (directory) {
    LaunchRequest launch{groved,
                         vpid,
                         static_cast<std::uint32_t>(roster_->records().size()),
                         identity_.endpoint,
                         *directory,
                         daemon_param_arguments(),
                         identity_.secret,
                         std::string(),
                         std::nullopt,
                         /*joining=*/true};
    pid = launch_local_daemon(launch);
  }
  if (!pid) {
    daemon_lost(vpid, "could not be started: " + pid.error().message);
    return;
  }
  roster_->launched(vpid, *pid);
}

Result<std::vector<Vpid>> Controller::grow_hosts(const std::vector<GrowHost>& hosts) {
  if (!options_.plan) {
    return Error{
        "grove grow --host grows a DVM started on a host list (grove start --host/--hostfile); "
        "this one runs on this host only: use --local N"};
  }
  if (options_.launcher != RemoteLauncherKind::ssh) {
    return Error{
        "this DVM was started under Slurm: its daemons start as srun steps, not over ssh; "
        "grove grow --activate starts them on the allocation's unused nodes"};
  }
  if (split_words(params_.get_string("plm_ssh_agent")).empty())
    return Error{"plm_ssh_agent is empty"};
  std::vector<std::string> names;
  for (const GrowHost& host : hosts) {
    if (!valid_host_name(host.name)) return Error{"--host " + host.name + ": not a host name"};
    names.push_back(host.name);
  }
  std::vector<std::string> planned_names;
  for (const PlannedDaemon& planned : options_.plan->daemons)
    planned_names.push_back(planned.host.name);
  auto targets = roster_->grow_targets(names, planned_names);
  if (!targets) return targets.error();
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (const std::optional<Vpid> back = (*targets)[i]) {
      if (Status ready = may_return(*back); !ready)
        return Error{"--host " + hosts[i].name + ": " + ready.error().message};
    }
  }
  SpawnPlan& plan = *options_.plan;
  std::vector<Vpid> launches;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const GrowHost& host = hosts[i];
    const std::optional<std::uint32_t> slots =
        host.slots > 0 ? std::optional<std::uint32_t>(host.slots) : std::nullopt;
    Vpid vpid = 0;
    if (const std::optional<Vpid> back = (*targets)[i]) {
      // Back at its old vpid: a return, which the engine declares once it reports.
      vpid = *back;
      roster_->revive(vpid);  // gone: grow_targets said so
      if (!host.user.empty()) plan.daemons[vpid].host.user = host.user;
      if (slots) roster_->planned(vpid, roster_->record(vpid).hostname, slots, true);
    } else {
      vpid = roster_->add_daemons(1, host.name).front();
      roster_->planned(vpid, host.name, slots, true);
      plan.daemons.push_back(PlannedDaemon{vpid, HostEntry{host.name, host.user, slots, {}}, true});
    }
    launches.push_back(vpid);
  }
  log_.notice("daemon", "grove grow: starting %zu daemon(s) over ssh", launches.size());
  start_joiners_over_ssh(launches);
  std::erase_if(launches, [this](Vpid vpid) {
    return roster_->record(vpid).state != DaemonStateKind::launching;
  });
  return launches;
}

void Controller::start_joiners_over_ssh(const std::vector<Vpid>& vpids) {
  SshLaunchConfig config;
  config.agent = split_words(params_.get_string("plm_ssh_agent"));
  config.max_concurrent = static_cast<std::uint32_t>(params_.get_int("plm_ssh_num_concurrent"));
  config.param_arguments = remote_param_arguments();
  config.bootstrap = Bootstrap{identity_.secret, *options_.plan, remote_settings()};
  // Each joiner is started from here; none starts children of its own.
  config.bootstrap.plan->tree_spawn = false;
  config.joining = true;
  SshLauncher::Hooks hooks;
  hooks.on_failed = [this](Vpid vpid, const std::string& reason) {
    daemon_lost(vpid, "could not be started: " + reason);
    finish_growth();
  };
  auto ssh =
      std::make_unique<SshLauncher>(loop_->base(), log_, std::move(config), std::move(hooks));
  SshLauncher& launcher = *ssh;
  remote_.add(std::move(ssh));
  // A launch that fails at once (the agent cannot be run) is lost in here.
  launcher.launch(vpids);
}

void Controller::admit_joiner(roster::AdmitJoiner& admit) {
  // Everyone learns where it listens before the notice that makes it their
  // peer: the table's broadcast goes out first, on the same tree.
  runtime_->broadcast(daemon_tags::endpoint_table, encode(admit.table));
  if (!runtime_->declare_return(admit.vpid)) {
    daemon_lost(admit.vpid, "the engine refused its join", /*may_still_run=*/true);
    return;
  }
  if (auto respawn = launch_.respawns.find(admit.vpid); respawn != launch_.respawns.end())
    respawn->second.deadline.cancel();
  launch_.evicted_ns.erase(admit.vpid);  // this one runs; its predecessor left
  JoinWelcome welcome{std::move(admit.table), encode_join_seed(runtime_->join_seed())};
  runtime_->send_control(admit.vpid, daemon_tags::welcome, encode(welcome));
  log_.verbose("daemon", 1, "%s joined the DVM at epoch %llu",
               roster_->describe(admit.vpid).c_str(),
               static_cast<unsigned long long>(runtime_->engine().membership().epoch()));
  if (!launch_.growth) return;
  auto& waiting = launch_.growth->waiting;
  if (std::erase(waiting, admit.vpid) > 0) launch_.growth->joined.push_back(admit.vpid);
  finish_growth();
}

void Controller::grow_overdue() {
  if (!launch_.growth || stopping_.sequence.stopping()) return;
  const std::vector<Vpid> late = launch_.growth->waiting;
  for (Vpid vpid : late)
    daemon_lost(vpid, "did not report within 30 s of grove grow", /*may_still_run=*/true);
  launch_.growth->waiting.clear();
  finish_growth();
}

void Controller::finish_growth() {
  if (!launch_.growth) return;
  // One that was lost before it reported (it exited, its connection closed)
  // is waited for no more.
  std::erase_if(launch_.growth->waiting, [this](Vpid vpid) {
    return roster_->record(vpid).state != DaemonStateKind::launching;
  });
  if (!launch_.growth->waiting.empty()) return;
  Growth growth = std::move(*launch_.growth);
  launch_.growth.reset();
  launch_.grow_deadline.cancel();
  std::ranges::sort(growth.joined);  // in vpid order, whichever reported first
  nlohmann::json joined = nlohmann::json::array();
  for (Vpid vpid : growth.joined) {
    const DaemonRecord& record = roster_->record(vpid);
    if (record.state == DaemonStateKind::up) {
      const bool back = !record.history.empty() && record.history.back() == "back";
      joined.push_back({{"vpid", vpid}, {"host", record.hostname}, {"back", back}});
    }
  }
  if (joined.empty()) {
    growth.reply(error_reply("no daemon joined the DVM (see grove log)"));
    return;
  }
  growth.reply({{"ok", true}, {"joined", joined}, {"daemons", roster_->living()}});
}

}  // namespace grove
