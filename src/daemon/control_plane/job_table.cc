#include "daemon/control_plane/job_table.h"

#include <algorithm>

#include "daemon/control_plane/job_table_job.h"
#include "jobs/binding_policy.h"
#include "util/text.h"

namespace grove {

using namespace job_table;

namespace {

// The programs a job runs, as a shell would show them (MPMD apps split by ':').
std::string command_text(const std::vector<JobApp>& apps) {
  std::string text;
  for (const JobApp& app : apps) {
    if (!text.empty()) text += " : ";
    for (std::size_t at = 0; at < app.argv.size(); ++at)
      text += (at == 0 ? "" : " ") + shell_word(app.argv[at]);
  }
  return text;
}

Outbox refused(Requester requester, const std::string& error) {
  return {CliEvent{requester, {{"ok", false}, {"error", error}}, true}};
}

nlohmann::json summary(const JobSpec& spec, std::uint32_t id, std::size_t daemons,
                       std::int64_t started_s, const std::string& message,
                       std::optional<std::uint32_t> parent) {
  nlohmann::json entry{{"job", id},
                       {"nspace", spec.nspace},
                       {"np", spec.ranks.size()},
                       {"daemons", daemons},
                       {"command", command_text(spec.apps)},
                       {"started", started_s},
                       {"message", message}};
  if (parent) entry["parent"] = *parent;
  return entry;
}

}  // namespace

JobTable::JobTable(JobTableConfig config) : config_(std::move(config)) {}

JobTable::JobTable(JobTable&&) noexcept = default;
JobTable& JobTable::operator=(JobTable&&) noexcept = default;
JobTable::~JobTable() = default;

std::string JobTable::next_nspace() const {
  return config_.nspace_prefix + "." + std::to_string(next_job_);
}

std::map<std::uint32_t, std::string> JobTable::jobs_on(const std::set<Vpid>& daemons) const {
  std::map<std::uint32_t, std::string> found;
  for (const auto& [id, job] : jobs_) {
    for (const RankPlacement& rank : job->spec.ranks) {
      if (!daemons.contains(rank.daemon)) continue;
      found[id] = "job " + std::to_string(id) + " (" + job->spec.nspace + ")";
      break;
    }
  }
  return found;
}

JobTable::Job* JobTable::find(std::uint32_t id) {
  auto found = jobs_.find(id);
  return found == jobs_.end() ? nullptr : found->second.get();
}

JobTable::Job* JobTable::find_nspace(const std::string& nspace) {
  for (auto& [id, job] : jobs_) {
    if (job->spec.nspace == nspace) return job.get();
  }
  return nullptr;
}

Outbox JobTable::submit(const JobRequest& asked, Requester requester, const JobPlaces& places,
                        std::int64_t now_s) {
  std::vector<MapDaemon> daemons = places.living;
  JobRequest request = asked;
  if (!request.hosts.empty()) {
    auto chosen = restrict_to_hosts(daemons, request.hosts, places.controller_host);
    if (!chosen) return refused(requester, chosen.error().message);
    daemons = std::move(*chosen);
  }
  if (request.np() == 0 && request.apps.size() == 1) {
    // No -n: one rank per slot of the DVM, as mpirun does.
    request.apps.front().np = ranks_to_fill(daemons, request.policy);
    if (request.np() > kMaxRanksPerJob) {
      return refused(requester, "one rank per slot would be " + std::to_string(request.np()) +
                                    " ranks, more than a job may have (" +
                                    std::to_string(kMaxRanksPerJob) + "): give -n");
    }
  }
  if (request.stdin_rank >= static_cast<std::int64_t>(request.np())) {
    return refused(requester, "--stdin " + std::to_string(request.stdin_rank) +
                                  ": the job has ranks 0 to " + std::to_string(request.np() - 1));
  }
  auto map = map_ranks(request.np(), daemons, request.policy);
  if (!map) return refused(requester, map.error().message);
  if (request.bind_default)
    request.bind_to = default_binding(*map, daemons, request.policy, cores_in_use());
  if (request.bind_to == "core")
    place_on_free_cores(*map, daemons, request.policy.pe, cores_taken(daemons));
  if (request.bind_to == "core" && !request.overload_allowed && !request.bind_default) {
    if (Status fits = check_core_overload(*map, daemons, request.policy.pe); !fits)
      return refused(requester, fits.error().message);
  }
  if (map->oversubscribed && !request.oversubscribe) {
    return refused(requester, std::to_string(request.np()) + " ranks are more than the " +
                                  std::to_string(ranks_to_fill(daemons, request.policy)) +
                                  " slots of the DVM's hosts, and --nooversubscribe was given");
  }
  Outbox out;
  launch(Launch{request, *map, daemons, requester, nullptr, 0, now_s}, out);
  return out;
}

std::map<std::string, std::uint64_t> JobTable::cores_in_use() const {
  HostCoresInUse in_use;
  for (const auto& [id, job] : jobs_) {
    const JobSpec& spec = job->spec;
    for (const RankPlacement& placement : spec.ranks) {
      if (placement.node_id < spec.hostnames.size())
        in_use[spec.hostnames[placement.node_id]] += spec.cores_per_rank();
    }
  }
  return in_use;
}

std::map<std::string, std::set<std::uint32_t>> JobTable::cores_taken(
    const std::vector<MapDaemon>& daemons) const {
  std::map<std::string, std::uint32_t> cores;
  for (const MapDaemon& daemon : daemons)
    cores[daemon.hostname] = std::max(cores[daemon.hostname], daemon.cores);
  HostCoresTaken taken;
  for (const auto& [id, job] : jobs_) {
    const JobSpec& spec = job->spec;
    if (spec.bind_to != "core") continue;
    const std::uint64_t width = spec.cores_per_rank();
    for (const RankPlacement& placement : spec.ranks) {
      if (placement.node_id >= spec.hostnames.size()) continue;
      const std::string& host = spec.hostnames[placement.node_id];
      const std::uint32_t count = cores[host];
      for (std::uint64_t core = placement.host_rank * width;
           core < (placement.host_rank + 1) * width; ++core)
        taken[host].insert(static_cast<std::uint32_t>(count != 0 ? core % count : core));
    }
  }
  return taken;
}

JobTable::Job& JobTable::launch(Launch how, Outbox& out) {
  const JobRequest& request = how.request;
  const JobMap& map = how.map;
  auto job = std::make_unique<Job>();
  job->id = next_job_++;
  job->cli = how.cli;
  job->daemons = map.daemons.size();
  job->started_s = how.now_s;
  JobSpec& spec = job->spec;
  spec.job = job->id;
  spec.nspace = config_.nspace_prefix + "." + std::to_string(job->id);
  spec.env = request.env;
  spec.env_replaces = request.env_replaces;
  spec.apps = request.apps;
  spec.ranks = map.ranks;
  for (Vpid vpid : map.daemons) {
    auto named = std::ranges::find(how.daemons, vpid, &MapDaemon::vpid);
    spec.hostnames.push_back(named != how.daemons.end() ? named->hostname : "?");
  }
  spec.node_slots = map.node_slots;
  spec.map_by = map_policy_text(request.policy);
  spec.stdin_rank = how.parent != nullptr ? JobSpec::kStdinNone : request.stdin_rank;
  spec.bind_to = request.bind_to;
  spec.bind_by_default = request.bind_default;
  spec.report_bindings = request.report_bindings;
  spec.mpi = request.mpi;
  spec.pmi_preput = request.pmi_preput;
  spec.placed_epoch = epoch_;
  if (how.parent != nullptr) {
    spec.parent_nspace = how.parent->spec.nspace;
    spec.parent_rank = how.parent_rank;
    job->parent = how.parent->id;
    how.parent->children.insert(job->id);
  }
  if (job->cli) {
    nlohmann::json started{{"ok", true},
                           {"event", "started"},
                           {"job", job->id},
                           {"nspace", spec.nspace},
                           {"np", request.np()},
                           {"daemons", map.daemons},
                           {"oversubscribed", map.oversubscribed}};
    if (request.display_map) {
      nlohmann::json nodes = nlohmann::json::array();
      for (std::size_t node = 0; node < map.daemons.size(); ++node) {
        nlohmann::json ranks = nlohmann::json::array();
        for (const RankPlacement& rank : map.ranks) {
          if (rank.node_id == node) ranks.push_back(rank.rank);
        }
        nodes.push_back({{"daemon", map.daemons[node]},
                         {"host", spec.hostnames[node]},
                         {"slots", map.node_slots[node]},
                         {"ranks", ranks}});
      }
      started["map"] = {{"map_by", spec.map_by}, {"bind_to", spec.bind_to}, {"nodes", nodes}};
    }
    out.push_back(CliEvent{*job->cli, std::move(started), false});
  }
  out.push_back(Notice{Notice::Level::jobs,
                       "job " + std::to_string(job->id) + " (" + spec.nspace +
                           ") started: " + std::to_string(request.np()) + " ranks on " +
                           std::to_string(map.daemons.size()) + " daemons (--map-by " +
                           spec.map_by + ", --bind-to " + spec.bind_to + ")" +
                           (how.parent != nullptr ? ", spawned by " + spec.parent_nspace : "") +
                           ": " + command_text(spec.apps)});
  if (request.timeout_s > 0) {
    job->timers.timeout = true;
    out.push_back(
        ArmTimer{job->id, TimerKind::timeout, static_cast<std::int64_t>(request.timeout_s) * 1000});
  }
  out.push_back(Broadcast{job_tags::launch, encode(spec)});
  Job& placed = *job;
  jobs_[job->id] = std::move(job);
  return placed;
}

void JobTable::report_failure(const Job& job, std::uint32_t rank, RankFailure how, int status,
                              const std::string& message, Outbox& out) const {
  out.push_back(
      RankFailed{job.spec.nspace, rank, how, status, message, spawned_by(job.spec.nspace)});
}

void JobTable::fail(Job& job, int status, const std::string& message, Outbox& out) {
  if (job.end.failed) return;
  job.end.failed = true;
  job.end.status = status;
  job.end.message = message;
  if (job.spawn_answer) {
    out.push_back(
        AnswerSpawn{*job.spawn_answer, job.spec.nspace,
                    Error{"the spawned job ended before all its ranks started: " + message}});
    job.spawn_answer.reset();
  }
  out.push_back(
      Notice{Notice::Level::verbose, "job " + std::to_string(job.id) + " ends: " + message});
  out.push_back(Broadcast{job_tags::kill, encode(JobRef{job.id})});
  // Its spawned jobs end with it (their exits are theirs; the parent's
  // status stays this one).
  for (std::uint32_t child : job.children) {
    if (Job* spawned = find(child))
      fail(*spawned, 1, "the job that spawned it (" + job.spec.nspace + ") ended", out);
  }
}

std::optional<Outbox> JobTable::kill(std::uint32_t id, int status, const std::string& reason) {
  Job* job = find(id);
  if (job == nullptr) return std::nullopt;
  if (!job->end.failed) job->end.killed = true;
  Outbox out;
  fail(*job, status, reason, out);
  return out;
}

std::optional<Outbox> JobTable::signal(std::uint32_t id, int signal) {
  if (find(id) == nullptr) return std::nullopt;
  return Outbox{Notice{Notice::Level::verbose, "job " + std::to_string(id) + ": signal " +
                                                   std::to_string(signal) + " for its ranks"},
                Broadcast{job_tags::signal, encode(JobSignal{id, signal})}};
}

Outbox JobTable::end_all(const std::string& reason) {
  Outbox out;
  for (auto& [id, job] : jobs_)
    fail(*job, 1, reason, out);
  return out;
}

Outbox JobTable::timer_fired(std::uint32_t id, TimerKind kind) {
  Job* job = find(id);
  if (job == nullptr) return {};
  Outbox out;
  switch (kind) {
    case TimerKind::timeout:
      job->timers.timeout = false;
      fail(*job, 124, "the job ran out of time (--timeout) and was killed", out);
      break;
    case TimerKind::ack_poll:
      job->timers.ack_poll = false;
      if (auto cli = cli_of(*job)) {
        out.push_back(CheckCliQueue{id, *cli});
      } else {
        flush_acks(*job, out);
      }
      break;
    case TimerKind::gone_gathering: {
      job->timers.gone_gathering = false;
      RanksGone gone{id, std::move(job->gone_unsent)};
      job->gone_unsent.clear();
      // A failed job is being killed; a finished one is gone already.
      if (!job->end.failed) out.push_back(Broadcast{job_tags::ranks_gone, encode(gone)});
      break;
    }
  }
  return out;
}

nlohmann::json JobTable::jobs_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& ended : ended_)
    out.push_back(ended);
  for (const auto& [id, job] : jobs_) {
    nlohmann::json entry =
        summary(job->spec, id, job->daemons, job->started_s, job->end.message, job->parent);
    entry["state"] = job->end.failed ? "ending" : "running";
    // Started and not gone: a rank being launched, or whose exec failed, is
    // not running.
    const std::set<std::uint32_t>& finished = job->finished;
    entry["ranks_running"] = std::ranges::count_if(
        job->started, [&finished](std::uint32_t rank) { return !finished.contains(rank); });
    out.push_back(std::move(entry));
  }
  return out;
}

void JobTable::maybe_finish(std::uint32_t id, std::int64_t now_s, Outbox& out) {
  auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  Job& job = *found->second;
  if (job.finished.size() < job.spec.ranks.size()) return;
  if (!job.children.empty()) return;  // it ends after the jobs it spawned
  settle_stdin(job, std::nullopt, out);
  if (job.spawn_answer) {  // every rank gone, some never reported as started
    out.push_back(AnswerSpawn{*job.spawn_answer, job.spec.nspace, ok_status()});
    job.spawn_answer.reset();
  }
  const Job::Timers armed = job.timers;
  if (armed.timeout) out.push_back(CancelTimer{id, TimerKind::timeout});
  if (armed.ack_poll) out.push_back(CancelTimer{id, TimerKind::ack_poll});
  if (armed.gone_gathering) out.push_back(CancelTimer{id, TimerKind::gone_gathering});
  out.push_back(Broadcast{job_tags::cleanup, encode(JobRef{job.id})});
  const int status = job.end.failed ? job.end.status : 0;
  out.push_back(JobEnded{job.spec.nspace, status, job.end.message, spawned_by(job.spec.nspace)});
  nlohmann::json ended =
      summary(job.spec, id, job.daemons, job.started_s, job.end.message, job.parent);
  const char* state = job.end.killed ? "killed" : job.end.failed ? "failed" : "done";
  ended["state"] = state;
  out.push_back(
      Notice{Notice::Level::jobs, "job " + std::to_string(id) + " (" + job.spec.nspace +
                                      ") ended after " + std::to_string(now_s - job.started_s) +
                                      " s: " + state + ", status " + std::to_string(status) +
                                      (job.end.message.empty() ? "" : ": " + job.end.message)});
  ended["status"] = status;
  ended["ranks_running"] = 0;
  ended["ended"] = now_s;
  ended_.push_back(std::move(ended));
  if (ended_.size() > kRecentJobs) ended_.pop_front();
  const std::optional<Requester> cli = job.cli;
  const std::optional<std::uint32_t> parent = job.parent;
  const std::string message = job.end.message;
  jobs_.erase(found);
  if (cli) {
    out.push_back(CliEvent{
        *cli,
        {{"ok", true}, {"event", "exit"}, {"job", id}, {"status", status}, {"message", message}},
        true});
  }
  if (parent) child_ended(*parent, id, status, message, now_s, out);
}

}  // namespace grove
