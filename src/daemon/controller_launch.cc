// The controller starting the DVM's other daemons: forked on this host, or
// over ssh along the spawn plan (it starts its own children; with tree spawn
// each daemon then starts its own once the controller has welcomed it); and
// how the start ends: ready, or failed with nothing left behind.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "daemon/controller.h"
#include "daemon/host_info.h"
#include "os/cpu_binding.h"
#include "os/process_limits.h"
#include "plm/local_launcher.h"
#include "plm/srun_launcher.h"
#include "plm/ssh_launcher.h"
#include "util/text.h"

namespace grove {

Status Controller::launch_daemons() {
  Status launched = ok_status();
  if (options_.plan) {
    const PlannedDaemon& planned = options_.plan->daemons[kControllerVpid];
    roster_->planned(kControllerVpid, roster_->record(kControllerVpid).hostname, planned.host.slots,
                     planned.holds_ranks);
    launched = launch_remote_daemons();
    // After the launch: discovering the host takes tens of milliseconds the
    // remote daemons (each discovering its own) need not wait for.
    topology_ = HostTopology::load();
  } else {
    // Before the launch: the daemons here import it instead of each
    // discovering the same host again (docs/dvm.md, "Start-up").
    topology_ = HostTopology::load();
    launched = launch_local_daemons();
  }
  roster_->set_controller_host(topology_->core_count(), topology_->package_count(),
                               open_file_limit());
  return launched;
}

Status Controller::launch_local_daemons() {
  const std::vector<std::string> param_arguments = daemon_param_arguments();
  const std::string groved = options_.groved_path.empty() ? find_groved() : options_.groved_path;
  std::string topology_xml = identity_.dvm.directory + "/topology.xml";
  if (auto exported = topology_->export_xml(topology_xml); !exported) {
    log_.verbose("daemon", 1, "daemons discover the host themselves: %s",
                 exported.error().message.c_str());
    topology_xml.clear();
  }
  // Daemons sharing a host each on a CPU of their own: a daemon's threads
  // (its loop, libpmix's) then wake each other without a cross-CPU wakeup,
  // and daemons do not migrate (docs/dvm.md, "Daemons sharing a host").
  const bool bind = options_.daemons > 1 && params_.get_bool("daemon_bind_local");
  for (Vpid vpid = 1; vpid < options_.daemons; ++vpid) {
    auto directory = create_daemon_directory(identity_.dvm.directory, vpid);
    if (!directory) return directory.error();
    LaunchRequest request{groved,
                          vpid,
                          options_.daemons,
                          identity_.endpoint,
                          *directory,
                          param_arguments,
                          identity_.secret,
                          topology_xml,
                          bind ? std::optional<unsigned>(vpid) : std::nullopt};
    auto pid = launch_local_daemon(request);
    if (!pid) return pid.error();
    roster_->launched(vpid, *pid);
  }
  log_.verbose("daemon", 1, "launched %u daemons from %s; controller at %s", options_.daemons - 1,
               groved.c_str(), identity_.endpoint.c_str());
  if (bind) {
    // Last, so that the daemons above were started from an unbound process
    // (each also gets the whole set back in its child, see local_launcher.cc).
    if (auto cpu = bind_to_cpu_slot(kControllerVpid); cpu) {
      log_.verbose("daemon", 1, "controller bound to CPU %d", *cpu);
    } else {
      log_.verbose("daemon", 1, "controller not bound: %s", cpu.error().message.c_str());
    }
  }
  return ok_status();
}

Status Controller::launch_remote_daemons() {
  const SpawnPlan& plan = *options_.plan;
  for (Vpid vpid = 1; vpid < plan.size(); ++vpid) {
    roster_->planned(vpid, plan.daemons[vpid].host.name, plan.daemons[vpid].host.slots,
                     plan.daemons[vpid].holds_ranks);
  }
  if (plan.size() == 1) return ok_status();
  return options_.launcher == RemoteLauncherKind::slurm ? launch_over_srun() : launch_over_ssh();
}

RemoteSettings Controller::remote_settings() const {
  RemoteSettings remote;
  remote.prefix = options_.prefix;
  remote.groved_path = !options_.prefix.empty()       ? options_.prefix + "/bin/groved"
                       : options_.groved_path.empty() ? find_groved()
                                                      : options_.groved_path;
  remote.controller_endpoint = identity_.endpoint;
  return remote;
}

std::vector<std::string> Controller::remote_param_arguments() const {
  std::vector<std::string> arguments = daemon_param_arguments();
  // Daemons that land on this very machine (namespaces, containers) learn it
  // from the boot id and bind themselves (docs/dvm.md, "Daemons sharing a host").
  const std::string boot_id = kernel_boot_id();
  if (params_.get_bool("daemon_bind_local") && !boot_id.empty() &&
      params_.get_string("daemon_bind_boot_id").empty()) {
    arguments.insert(arguments.end(), {"--mca", "daemon_bind_boot_id", boot_id});
  }
  return arguments;
}

Status Controller::launch_over_ssh() {
  const SpawnPlan& plan = *options_.plan;
  SshLaunchConfig config;
  config.agent = split_words(params_.get_string("plm_ssh_agent"));
  if (config.agent.empty()) return Error{"plm_ssh_agent is empty"};
  config.max_concurrent = static_cast<std::uint32_t>(params_.get_int("plm_ssh_num_concurrent"));
  config.param_arguments = remote_param_arguments();
  config.bootstrap = Bootstrap{identity_.secret, plan, remote_settings()};
  SshLauncher::Hooks hooks;
  hooks.on_failed = [this](Vpid vpid, const std::string& reason) {
    on_launch_failed(vpid, reason);
  };
  log_.verbose("daemon", 1, "starting %u daemons over '%s' (%s spawn), groved at %s",
               plan.size() - 1, params_.get_string("plm_ssh_agent").c_str(),
               plan.tree_spawn ? "tree" : "flat", config.bootstrap.remote.groved_path.c_str());
  auto ssh =
      std::make_unique<SshLauncher>(loop_->base(), log_, std::move(config), std::move(hooks));
  SshLauncher& launcher = *ssh;
  remote_.add(std::move(ssh));
  launcher.launch(plan.launches(kControllerVpid));
  return ok_status();
}

Status Controller::launch_over_srun() {
  SrunLaunchConfig config;
  config.srun = split_words(params_.get_string("plm_slurm_srun"));
  if (config.srun.empty()) return Error{"plm_slurm_srun is empty"};
  config.extra_args = split_words(params_.get_string("plm_slurm_args"));
  config.param_arguments = remote_param_arguments();
  config.bootstrap = Bootstrap{identity_.secret, *options_.plan, remote_settings()};
  // One step starts everyone: nobody starts children of its own.
  config.bootstrap.plan->tree_spawn = false;
  SrunLauncher::Hooks hooks;
  hooks.on_exit = [this](const std::string& how, const std::string& last_lines) {
    on_srun_exit(how, last_lines);
  };
  auto srun =
      std::make_unique<SrunLauncher>(loop_->base(), log_, std::move(config), std::move(hooks));
  if (auto status = srun->start(); !status) return status;
  remote_.add(std::move(srun));
  return ok_status();
}

void Controller::on_srun_exit(const std::string& how, const std::string& last_lines) {
  apply(launch_.supervisor.step_ended(how, last_lines, roster_->describe_launching()));
}

void Controller::on_launch_failed(Vpid vpid, const std::string& reason) {
  if (vpid == kControllerVpid || vpid >= roster_->records().size()) return;
  apply(launch_.supervisor.launch_failed(describe_daemon(vpid), reason));
}

void Controller::apply(start::Outbox out) {
  for (start::Effect& effect : out) {
    std::visit(
        [this](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, start::ArmReportDeadline>) {
            launch_.report_deadline = Timer(loop_->base(), [this] {
              apply(launch_.supervisor.report_deadline_passed(roster_->describe_launching()));
            });
            launch_.report_deadline.arm(e.delay_ms);
          } else if constexpr (std::is_same_v<T, start::ArmFailure>) {
            launch_.failure_timer =
                Timer(loop_->base(), [this] { apply(launch_.supervisor.failure_timer_fired()); });
            launch_.failure_timer.arm(e.delay_ms);
          } else if constexpr (std::is_same_v<T, start::FailStart>) {
            fail_startup(e.message);
          } else if constexpr (std::is_same_v<T, start::StopDvm>) {
            // Not from inside the launcher's callback: the stop ends it.
            launch_.step_end_timer =
                Timer(loop_->base(), [this, reason = e.reason] { begin_stop(nullptr, reason); });
            launch_.step_end_timer.arm(0);
          } else {
            static_assert(std::is_same_v<T, start::Notice>, "a start effect without a driver");
            if (e.level == start::Notice::Level::error) {
              log_.error("%s", e.text.c_str());
            } else {
              log_.verbose("plm", 1, "%s", e.text.c_str());
            }
          }
        },
        effect);
  }
}

void Controller::become_ready() {
  launch_.supervisor.ready();
  launch_.report_deadline = Timer();
  roster_->mark_running(runtime_->now());
  const std::int64_t heartbeat_ms = params_.get_int("daemon_heartbeat_ms");
  if (heartbeat_ms > 0) {
    heartbeat_timer_ = Timer(loop_->base(), [this] { check_heartbeats(); });
    heartbeat_timer_.arm_every(heartbeat_ms);
  }
  std::ofstream(identity_.dvm.directory + "/dvm.json")
      << nlohmann::json{{"pid", getpid()},
                        {"daemons", options_.daemons},
                        {"socket", identity_.dvm.socket_path},
                        {"endpoint", identity_.endpoint}}
             .dump()
      << "\n";
  if (!options_.report_uri.empty()) {
    std::ofstream(options_.report_uri) << "unix:" << identity_.dvm.socket_path << "\n";
  }
  log_.verbose("daemon", 1, "DVM ready with %u daemons", options_.daemons);
  if (options_.on_ready) {
    options_.on_ready("");
    options_.on_ready = nullptr;
  }
}

void Controller::fail_startup(const std::string& message) {
  launch_.report_deadline = Timer();
  log_.error("%s", message.c_str());
  if (options_.on_ready) {
    options_.on_ready(message);
    options_.on_ready = nullptr;
  }
  if (roster_) {
    const auto children = roster_->unreaped_children();
    for (const auto& [vpid, pid] : children)
      kill(pid, SIGKILL);
    for (const auto& [vpid, pid] : children) {
      waitpid(pid, nullptr, 0);
      roster_->reaped(vpid);  // never signal this pid again
    }
  }
  // Daemons already up on other hosts leave when our connections close.
  remote_.clear();
  control_.reset();
  runtime_.reset();
  if (!identity_.dvm.directory.empty()) {
    if (auto removed = remove_dvm_directory(identity_.dvm); !removed) {
      log_.error("%s", removed.error().message.c_str());
    }
  }
  stopping_.exit_code = 1;
  if (loop_) loop_->exit();
}

}  // namespace grove
