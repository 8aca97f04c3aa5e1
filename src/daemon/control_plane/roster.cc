#include "daemon/control_plane/roster.h"

#include <algorithm>
#include <set>

#include "jobs/job_map.h"

namespace grove {

std::string_view daemon_state_name(DaemonStateKind state) {
  switch (state) {
    case DaemonStateKind::launching:
      return "launching";
    case DaemonStateKind::up:
      return "up";
    case DaemonStateKind::failed:
      return "failed";
    case DaemonStateKind::stopped:
      return "stopped";
    case DaemonStateKind::draining:
      return "draining";
    case DaemonStateKind::removed:
      return "removed";
  }
  return "unknown";
}

DaemonRoster::DaemonRoster(RosterConfig config, DaemonRecord controller) : config_(config) {
  daemons_.resize(std::max<std::uint32_t>(1, config_.size));
  for (Vpid vpid = 0; vpid < daemons_.size(); ++vpid)
    daemons_[vpid].vpid = vpid;
  controller.vpid = kControllerVpid;
  controller.state = DaemonStateKind::up;
  daemons_[kControllerVpid] = std::move(controller);
  note(daemons_[kControllerVpid], "up");
}

void DaemonRoster::planned(Vpid vpid, std::string hostname, std::optional<std::uint32_t> slots,
                           bool holds_ranks) {
  DaemonRecord& record = daemons_.at(vpid);
  record.hostname = std::move(hostname);
  record.slots = slots;
  record.holds_ranks = holds_ranks;
}

std::vector<Vpid> DaemonRoster::add_daemons(std::uint32_t count, std::string hostname) {
  // By value: the caller may name a record of ours, which growing moves.
  std::vector<Vpid> added;
  for (std::uint32_t i = 0; i < count; ++i) {
    DaemonRecord record;
    record.vpid = static_cast<Vpid>(daemons_.size());
    record.hostname = hostname;
    added.push_back(record.vpid);
    daemons_.push_back(std::move(record));
  }
  config_.size = static_cast<std::uint32_t>(daemons_.size());
  return added;
}

Result<std::vector<std::optional<Vpid>>> DaemonRoster::grow_targets(
    const std::vector<std::string>& hosts, const std::vector<std::string>& planned_names) const {
  const std::string& controller_host = daemons_[kControllerVpid].hostname;
  auto on_host = [&](const std::string& host, const DaemonRecord& daemon) {
    return names_host(host, daemon.hostname, controller_host) ||
           (daemon.vpid < planned_names.size() && !planned_names[daemon.vpid].empty() &&
            names_host(host, planned_names[daemon.vpid], controller_host));
  };
  std::vector<std::optional<Vpid>> targets;
  for (const std::string& host : hosts) {
    std::optional<Vpid> back;
    for (const DaemonRecord& daemon : daemons_) {
      if (!on_host(host, daemon)) continue;
      const bool out =
          daemon.state == DaemonStateKind::failed || daemon.state == DaemonStateKind::removed;
      // One that never reported never had a place in the trees: not its vpid.
      if (out && !ever_up(daemon.vpid)) continue;
      if (out) {
        if (!back) back = daemon.vpid;
        continue;
      }
      return Error{"--host " + host + ": " + describe(daemon.vpid) + " is in the DVM already (" +
                   std::string(daemon_state_name(daemon.state)) + ")"};
    }
    for (std::size_t earlier = 0; earlier < targets.size(); ++earlier) {
      if (names_host(host, hosts[earlier], controller_host) || (back && targets[earlier] == back))
        return Error{"--host " + host + ": names the host " + hosts[earlier] + " names"};
    }
    targets.push_back(back);
  }
  return targets;
}

bool DaemonRoster::gone(Vpid vpid) const {
  const DaemonRecord& record = daemons_.at(vpid);
  const bool out =
      record.state == DaemonStateKind::failed || record.state == DaemonStateKind::removed;
  return out && !record.link_open && record.pid <= 0;
}

bool DaemonRoster::revive(Vpid vpid) {
  if (!gone(vpid)) return false;
  DaemonRecord& record = daemons_.at(vpid);
  record.state = DaemonStateKind::launching;
  record.returning = ever_up(vpid);
  record.pid = 0;
  record.host_pid = 0;
  record.endpoint.clear();
  record.failure.clear();
  return true;
}

void DaemonRoster::note(DaemonRecord& record, std::string event) {
  if (record.history.size() == kMaxHistory) record.history.erase(record.history.begin());
  record.history.push_back(std::move(event));
}

void DaemonRoster::launched(Vpid vpid, int pid) {
  daemons_.at(vpid).pid = pid;
}

void DaemonRoster::set_controller_host(std::uint32_t cores, std::uint32_t packages,
                                       std::uint64_t open_files) {
  DaemonRecord& self = daemons_[kControllerVpid];
  self.cores = cores;
  self.packages = packages;
  self.open_files = open_files;
}

void DaemonRoster::heard_from(Vpid from, TimeNs now) {
  if (from < daemons_.size()) daemons_[from].last_seen_ns = now;
}

std::optional<std::string> DaemonRoster::unexpected_report(Vpid from, Vpid claimed) const {
  if (claimed != from || from >= daemons_.size() || from == kControllerVpid) {
    return "daemon " + std::to_string(from) + " reported as vpid " + std::to_string(claimed);
  }
  // A second report (a daemon that restarted its connection) changes nothing.
  if (daemons_[from].state != DaemonStateKind::launching) return std::string();
  return std::nullopt;
}

roster::Outbox DaemonRoster::on_report(Vpid from, const DaemonReport& report, TimeNs now) {
  roster::Outbox out;
  if (unexpected_report(from, report.vpid)) return out;
  DaemonRecord& record = daemons_[from];
  record.hostname = report.hostname;
  record.host_pid = static_cast<int>(report.pid);
  record.cores = report.cores;
  record.packages = std::max<std::uint32_t>(1, report.packages);
  record.open_files = report.open_files;
  record.topology_imported = report.topology_imported;
  record.endpoint = report.endpoint;
  record.state = DaemonStateKind::up;
  record.last_seen_ns = now;
  record.link_open = true;
  record.reported = true;
  note(record, record.returning ? "back" : phase_ == Phase::running ? "joined" : "up");
  record.returning = false;
  if (phase_ == Phase::running) {
    // Grown into the running DVM: its welcome carries its seed.
    out.emplace_back(roster::AdmitJoiner{from, endpoint_table()});
    return out;
  }
  // The welcome tells a daemon started over ssh that it may start its own
  // children (tree spawn) and free its launcher's slot.
  out.emplace_back(roster::SendControl{from, daemon_tags::welcome, {}});
  const std::size_t reported = living();
  if (config_.size > 32 && (reported % 32 == 0 || reported == config_.size)) {
    out.emplace_back(roster::ReportProgress{reported, config_.size});
  }
  if (reported == config_.size) out.emplace_back(roster::BroadcastEndpointTable{endpoint_table()});
  return out;
}

EndpointTable DaemonRoster::endpoint_table() const {
  EndpointTable table;
  for (const DaemonRecord& daemon : daemons_) {
    table.daemons.push_back(DaemonReport{daemon.vpid, daemon.endpoint, daemon.hostname,
                                         daemon.cores, static_cast<std::uint32_t>(daemon.host_pid),
                                         daemon.topology_imported, daemon.packages});
  }
  return table;
}

void DaemonRoster::mark_running(TimeNs now) {
  phase_ = Phase::running;
  if (config_.heartbeat_interval_ns == 0) return;
  watch_.emplace(config_.heartbeat_interval_ns,
                 config_.heartbeat_interval_ns * config_.heartbeat_misses);
  watch_->check(now);
}

roster::Outbox DaemonRoster::check_heartbeats(TimeNs now) {
  roster::Outbox out;
  if (phase_ != Phase::running || !watch_) return out;
  // Our own stall (the loop did not run) is no daemon's silence.
  const TimeNs stalled = watch_->check(now);
  if (stalled > 0) {
    char text[96];
    std::snprintf(text, sizeof text,
                  "the controller's loop stalled for %.1f s; not held against daemons",
                  static_cast<double>(stalled) / 1e9);
    out.emplace_back(roster::Notice{roster::Notice::Level::verbose, text});
  }
  for (DaemonRecord& daemon : daemons_) {
    const bool member =
        daemon.state == DaemonStateKind::up || daemon.state == DaemonStateKind::draining;
    if (daemon.vpid == kControllerVpid || !member) continue;
    daemon.last_seen_ns += stalled;
    if (!watch_->silent_too_long(daemon.last_seen_ns, now)) continue;
    roster::Outbox lost =
        lose(daemon.vpid, "missed " + std::to_string(config_.heartbeat_misses) + " heartbeats",
             /*may_still_run=*/true);
    std::move(lost.begin(), lost.end(), std::back_inserter(out));
  }
  return out;
}

roster::Outbox DaemonRoster::on_connection_closed(Vpid peer) {
  if (peer >= daemons_.size()) return {};
  daemons_[peer].link_open = false;
  if (phase_ == Phase::stopping) return {};
  return lose(peer, "its connection to the controller closed", /*may_still_run=*/false);
}

roster::Outbox DaemonRoster::on_link_lost(Vpid reporter, Vpid peer) {
  // Only a member in good standing accuses, and only a member is accused:
  // one partition costs the DVM one daemon (the first accusation wins; the
  // accused one's own report then comes from a departed daemon).
  if (phase_ == Phase::stopping || reporter >= daemons_.size() || peer >= daemons_.size() ||
      peer == kControllerVpid ||
      (daemons_[reporter].state != DaemonStateKind::up &&
       daemons_[reporter].state != DaemonStateKind::draining)) {
    return {};
  }
  return lose(peer, "daemon " + std::to_string(reporter) + " lost its link to it",
              /*may_still_run=*/true);
}

roster::Outbox DaemonRoster::on_process_ended(Vpid vpid, const std::string& how) {
  if (vpid == kControllerVpid || vpid >= daemons_.size()) return {};
  DaemonRecord& record = daemons_[vpid];
  if (record.pid > 0) record.pid = -record.pid;  // reaped: never signal this pid again
  if (phase_ == Phase::stopping) {
    if (record.state == DaemonStateKind::up || record.state == DaemonStateKind::draining)
      record.state = DaemonStateKind::stopped;
    return {};
  }
  return lose(vpid, "its process " + how, /*may_still_run=*/false);
}

roster::Outbox DaemonRoster::lose(Vpid vpid, const std::string& reason, bool may_still_run) {
  roster::Outbox out;
  if (vpid == kControllerVpid || vpid >= daemons_.size()) return out;
  DaemonRecord& record = daemons_[vpid];
  // Lost already, stopped, or removed (its exit is the leaving it was asked for).
  if (record.state != DaemonStateKind::launching && record.state != DaemonStateKind::up &&
      record.state != DaemonStateKind::draining) {
    return out;
  }
  if (phase_ == Phase::starting) {
    out.emplace_back(
        roster::StartupLoss{vpid, describe(vpid) + " failed during startup: " + reason});
    return out;
  }
  record.state = DaemonStateKind::failed;
  record.failure = reason;
  note(record, "lost");
  // Its pid on its own host: ours is 0 for a daemon started elsewhere.
  out.emplace_back(
      roster::Notice{roster::Notice::Level::error,
                     "daemon " + std::to_string(vpid) + " (" + record.hostname + ", pid " +
                         std::to_string(record.host_pid != 0 ? record.host_pid : record.pid) +
                         ") lost: " + reason});
  // A daemon declared lost must really be gone: a hung one is ended here, one
  // on another host is told (a partitioned or hung one may still hear it;
  // one whose process or connection ended is not dialled again).
  if (record.pid > 0) out.emplace_back(roster::KillProcess{vpid, record.pid});
  if (may_still_run && record.pid <= 0) {
    out.emplace_back(roster::SendControl{vpid, daemon_tags::evicted, encode(Eviction{reason})});
  }
  out.emplace_back(roster::DeclareDeparture{vpid});
  out.emplace_back(roster::AnnounceLoss{vpid, describe(vpid) + " lost: " + reason});
  return out;
}

void DaemonRoster::reaped(Vpid vpid) {
  DaemonRecord& record = daemons_.at(vpid);
  if (record.pid > 0) record.pid = -record.pid;
  if (phase_ == Phase::stopping &&
      (record.state == DaemonStateKind::up || record.state == DaemonStateKind::draining)) {
    record.state = DaemonStateKind::stopped;
  }
}

std::size_t DaemonRoster::living() const {
  return count(DaemonStateKind::up) + count(DaemonStateKind::draining);
}

Result<std::vector<Vpid>> DaemonRoster::shrink_targets(const std::vector<std::string>& hosts,
                                                       const std::vector<Vpid>& vpids) const {
  const std::string& controller_host = daemons_[kControllerVpid].hostname;
  std::set<Vpid> chosen;
  for (const std::string& host : hosts) {
    // Of a host's daemons, those in the DVM (one lost there earlier does not
    // keep the rest); if none is, the first says why.
    std::optional<Vpid> gone;
    bool found = false;
    for (const DaemonRecord& daemon : daemons_) {
      if (!names_host(host, daemon.hostname, controller_host)) continue;
      if (daemon.state != DaemonStateKind::up && daemon.vpid != kControllerVpid) {
        if (!gone) gone = daemon.vpid;
        continue;
      }
      found = true;
      chosen.insert(daemon.vpid);
    }
    if (found) continue;
    if (gone) {
      chosen.insert(*gone);  // refused below, with its state
      continue;
    }
    std::set<std::string> known;
    for (const DaemonRecord& daemon : daemons_) {
      if (daemon.state == DaemonStateKind::up) known.insert(daemon.hostname);
    }
    std::string list;
    for (const std::string& name : known)
      list += (list.empty() ? "" : ", ") + name;
    return Error{"--host " + host + ": no daemon of this DVM runs there (its hosts: " + list + ")"};
  }
  for (Vpid vpid : vpids) {
    if (vpid >= daemons_.size()) {
      return Error{"--daemon " + std::to_string(vpid) + ": this DVM has daemons 0 to " +
                   std::to_string(daemons_.size() - 1)};
    }
    chosen.insert(vpid);
  }
  for (Vpid vpid : chosen) {
    const DaemonRecord& daemon = daemons_[vpid];
    if (vpid == kControllerVpid) {
      return Error{describe(vpid) +
                   " is the controller: it cannot leave (grove stop ends the DVM)"};
    }
    if (daemon.state != DaemonStateKind::up) {
      return Error{describe(vpid) +
                   " is not in the DVM: " + std::string(daemon_state_name(daemon.state)) +
                   (daemon.failure.empty() ? "" : " (" + daemon.failure + ")")};
    }
  }
  return std::vector<Vpid>(chosen.begin(), chosen.end());
}

void DaemonRoster::drain(Vpid vpid) {
  DaemonRecord& record = daemons_.at(vpid);
  if (record.state == DaemonStateKind::up && vpid != kControllerVpid)
    record.state = DaemonStateKind::draining;
}

roster::Outbox DaemonRoster::remove(Vpid vpid, const std::string& reason) {
  if (vpid == kControllerVpid || vpid >= daemons_.size()) return {};
  DaemonRecord& record = daemons_[vpid];
  if (record.state != DaemonStateKind::up && record.state != DaemonStateKind::draining) return {};
  record.state = DaemonStateKind::removed;
  record.failure = reason;
  note(record, "removed");
  roster::Outbox out;
  // The departure first: every daemon routes around it before it goes.
  out.emplace_back(roster::DeclareDeparture{vpid});
  out.emplace_back(roster::SendControl{vpid, daemon_tags::removed, encode(Eviction{reason})});
  out.emplace_back(
      roster::Notice{roster::Notice::Level::verbose, describe(vpid) + " removed: " + reason});
  return out;
}

std::size_t DaemonRoster::count(DaemonStateKind state) const {
  return static_cast<std::size_t>(
      std::count_if(daemons_.begin(), daemons_.end(),
                    [state](const DaemonRecord& daemon) { return daemon.state == state; }));
}

std::vector<std::pair<Vpid, int>> DaemonRoster::unreaped_children() const {
  std::vector<std::pair<Vpid, int>> children;
  for (const DaemonRecord& daemon : daemons_) {
    if (daemon.vpid != kControllerVpid && daemon.pid > 0)
      children.emplace_back(daemon.vpid, daemon.pid);
  }
  return children;
}

std::string DaemonRoster::describe(Vpid vpid) const {
  std::string text = "daemon " + std::to_string(vpid);
  if (vpid < daemons_.size() && !daemons_[vpid].hostname.empty()) {
    text += " (" + daemons_[vpid].hostname + ")";
  }
  return text;
}

std::string DaemonRoster::describe_launching() const {
  constexpr std::size_t kNamed = 10;
  std::string text;
  std::size_t count = 0;
  for (const DaemonRecord& daemon : daemons_) {
    if (daemon.vpid == kControllerVpid || daemon.state != DaemonStateKind::launching) continue;
    if (++count <= kNamed) text += (text.empty() ? "" : ", ") + describe(daemon.vpid);
  }
  if (count > kNamed) text += ", and " + std::to_string(count - kNamed) + " more";
  return text;
}

}  // namespace grove
