#include "jobs/job_manager.h"

#include <algorithm>
#include <ctime>
#include <set>

#include "jobs/binding_policy.h"
#include "jobs/job_manager_job.h"
#include "util/text.h"

namespace grove {

namespace {
// Ranks of a job tend to leave together: their exits go out as one broadcast.
constexpr std::int64_t kGoneGatheringMs = 20;
// How often the CLI's queue is looked at while acknowledgements wait for it.
constexpr std::int64_t kAckPollMs = 10;

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
}  // namespace

JobManager::JobManager(event_base* base, const Log& log, std::string nspace_prefix,
                       JobManagerHooks hooks)
    : base_(base), log_(log), nspace_prefix_(std::move(nspace_prefix)), hooks_(std::move(hooks)) {}

JobManager::~JobManager() = default;

void JobManager::submit(const JobRequest& asked, JobEventFn events) {
  std::vector<MapDaemon> daemons = hooks_.living_daemons();
  JobRequest request = asked;
  if (!request.hosts.empty()) {
    auto chosen = restrict_to_hosts(daemons, request.hosts, hooks_.hostname(0));
    if (!chosen) {
      events({{"ok", false}, {"error", chosen.error().message}}, true);
      return;
    }
    daemons = std::move(*chosen);
  }
  if (request.np() == 0 && request.apps.size() == 1) {
    // No -n: one rank per slot of the DVM, as mpirun does.
    request.apps.front().np = ranks_to_fill(daemons, request.policy);
    if (request.np() > kMaxRanksPerJob) {
      events({{"ok", false},
              {"error", "one rank per slot would be " + std::to_string(request.np()) +
                            " ranks, more than a job may have (" + std::to_string(kMaxRanksPerJob) +
                            "): give -n"}},
             true);
      return;
    }
  }
  if (request.stdin_rank >= static_cast<std::int64_t>(request.np())) {
    events({{"ok", false},
            {"error", "--stdin " + std::to_string(request.stdin_rank) +
                          ": the job has ranks 0 to " + std::to_string(request.np() - 1)}},
           true);
    return;
  }
  auto map = map_ranks(request.np(), daemons, request.policy);
  if (!map) {
    events({{"ok", false}, {"error", map.error().message}}, true);
    return;
  }
  const HostCoresInUse in_use = cores_in_use();
  if (request.bind_default)
    request.bind_to = default_binding(*map, daemons, request.policy, in_use);
  if (request.bind_to == "core")
    place_on_free_cores(*map, daemons, request.policy.pe, cores_taken(daemons));
  if (request.bind_to == "core" && !request.overload_allowed && !request.bind_default) {
    if (Status fits = check_core_overload(*map, daemons, request.policy.pe); !fits) {
      events({{"ok", false}, {"error", fits.error().message}}, true);
      return;
    }
  }
  if (map->oversubscribed && !request.oversubscribe) {
    events({{"ok", false},
            {"error", std::to_string(request.np()) + " ranks are more than the " +
                          std::to_string(ranks_to_fill(daemons, request.policy)) +
                          " slots of the DVM's hosts, and --nooversubscribe was given"}},
           true);
    return;
  }
  launch(request, *map, std::move(events), nullptr, 0);
}

HostCoresInUse JobManager::cores_in_use() const {
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

HostCoresTaken JobManager::cores_taken(const std::vector<MapDaemon>& daemons) const {
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

JobManager::Job& JobManager::launch(const JobRequest& request, const JobMap& map, JobEventFn events,
                                    Job* parent, std::uint32_t parent_rank) {
  auto job = std::make_unique<Job>();
  job->manager = this;
  job->id = next_job_++;
  job->events = std::move(events);
  job->daemons = map.daemons.size();
  job->started_s = static_cast<std::int64_t>(std::time(nullptr));
  JobSpec& spec = job->spec;
  spec.job = job->id;
  spec.nspace = nspace_prefix_ + "." + std::to_string(job->id);
  spec.env = request.env;
  spec.env_replaces = request.env_replaces;
  spec.apps = request.apps;
  spec.ranks = map.ranks;
  for (Vpid vpid : map.daemons)
    spec.hostnames.push_back(hooks_.hostname(vpid));
  spec.node_slots = map.node_slots;
  spec.map_by = map_policy_text(request.policy);
  spec.stdin_rank = parent != nullptr ? JobSpec::kStdinNone : request.stdin_rank;
  spec.bind_to = request.bind_to;
  spec.bind_by_default = request.bind_default;
  spec.report_bindings = request.report_bindings;
  if (parent != nullptr) {
    spec.parent_nspace = parent->spec.nspace;
    spec.parent_rank = parent_rank;
    job->parent = parent->id;
    parent->children.insert(job->id);
  }
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
  job->events(started, false);
  // A DVM's log records every job at its default verbosity (grove log).
  log_.notice(
      "jobs", "job %u (%s) started: %u ranks on %zu daemons (--map-by %s, --bind-to %s)%s: %s",
      job->id, spec.nspace.c_str(), request.np(), map.daemons.size(), spec.map_by.c_str(),
      spec.bind_to.c_str(), parent != nullptr ? (", spawned by " + spec.parent_nspace).c_str() : "",
      command_text(spec.apps).c_str());
  if (request.timeout_s > 0) {
    Job* timed = job.get();
    job->timer = Timer(base_, [this, timed] {
      fail(*timed, 124, "the job ran out of time (--timeout) and was killed");
    });
    job->timer.arm(static_cast<std::int64_t>(request.timeout_s) * 1000);
  }
  Bytes launch = encode(spec);
  Job& placed = *job;
  jobs_[job->id] = std::move(job);
  hooks_.broadcast(job_tags::launch, launch);
  return placed;
}

void JobManager::report_failure(const Job& job, std::uint32_t rank, RankFailure how, int status,
                                const std::string& message) {
  if (hooks_.rank_failed) hooks_.rank_failed(job.spec.nspace, rank, how, status, message);
}

void JobManager::fail(Job& job, int status, const std::string& message) {
  if (job.failed) return;
  job.failed = true;
  job.status = status;
  job.message = message;
  if (job.launched) {
    auto launched = std::move(job.launched);
    job.launched = nullptr;
    launched(Error{"the spawned job ended before all its ranks started: " + message});
  }
  log_.verbose("daemon", 1, "job %u ends: %s", job.id, message.c_str());
  hooks_.broadcast(job_tags::kill, encode(JobRef{job.id}));
  // Its spawned jobs end with it (their exits are theirs; the parent's
  // status stays this one).
  for (std::uint32_t child : job.children) {
    auto found = jobs_.find(child);
    if (found != jobs_.end())
      fail(*found->second, 1, "the job that spawned it (" + job.spec.nspace + ") ended");
  }
}

bool JobManager::kill(std::uint32_t id, int status, const std::string& reason) {
  auto found = jobs_.find(id);
  if (found == jobs_.end()) return false;
  if (!found->second->failed) found->second->killed = true;
  fail(*found->second, status, reason);
  return true;
}

bool JobManager::signal(std::uint32_t id, int signal) {
  auto found = jobs_.find(id);
  if (found == jobs_.end()) return false;
  log_.verbose("daemon", 1, "job %u: signal %d for its ranks", id, signal);
  hooks_.broadcast(job_tags::signal, encode(JobSignal{id, signal}));
  return true;
}

void JobManager::forward_stdin(std::uint32_t id, std::string data, bool eof,
                               std::function<void(bool open)> done) {
  auto found = jobs_.find(id);
  if (found == jobs_.end() || found->second->failed) {
    done(false);
    return;
  }
  Job& job = *found->second;
  std::set<Vpid> daemons;
  for (const RankPlacement& rank : job.spec.ranks) {
    if (job.spec.reads_stdin(rank.rank) && !job.finished.contains(rank.rank))
      daemons.insert(rank.daemon);
  }
  if (daemons.empty() || !hooks_.send_stdin) {
    done(false);
    return;
  }
  const std::uint64_t seq = ++job.stdin_seq;
  job.stdin_pending[seq] = Job::PendingStdin{daemons, false, std::move(done)};
  for (Vpid daemon : daemons)
    hooks_.send_stdin(daemon, JobStdin{id, seq, data, eof});
}

void JobManager::on_stdin_ack(Vpid from, const StdinAck& ack) {
  auto found = jobs_.find(ack.job);
  if (found == jobs_.end()) return;
  auto& pending = found->second->stdin_pending;
  auto chunk = pending.find(ack.seq);
  if (chunk == pending.end() || chunk->second.waiting.erase(from) == 0) return;
  chunk->second.open = chunk->second.open || ack.open;
  if (!chunk->second.waiting.empty()) return;
  auto done = std::move(chunk->second.done);
  const bool open = chunk->second.open;
  pending.erase(chunk);
  done(open);
}

void JobManager::settle_stdin(Job& job, std::optional<Vpid> lost) {
  for (auto chunk = job.stdin_pending.begin(); chunk != job.stdin_pending.end();) {
    if (lost) chunk->second.waiting.erase(*lost);
    if (lost && !chunk->second.waiting.empty()) {
      ++chunk;
      continue;
    }
    auto done = std::move(chunk->second.done);
    const bool open = lost && chunk->second.open;
    chunk = job.stdin_pending.erase(chunk);
    done(open);
  }
}

nlohmann::json JobManager::summary(const Job& job) {
  nlohmann::json entry{{"job", job.id},
                       {"nspace", job.spec.nspace},
                       {"np", job.spec.ranks.size()},
                       {"daemons", job.daemons},
                       {"command", command_text(job.spec.apps)},
                       {"started", job.started_s},
                       {"message", job.message}};
  if (job.parent) entry["parent"] = *job.parent;
  return entry;
}

nlohmann::json JobManager::jobs_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& ended : ended_)
    out.push_back(ended);
  for (const auto& [id, job] : jobs_) {
    nlohmann::json entry = summary(*job);
    entry["state"] = job->failed ? "ending" : "running";
    // Started and not gone: a rank being launched, or whose exec failed, is
    // not running.
    const std::set<std::uint32_t>& finished = job->finished;
    entry["ranks_running"] = std::ranges::count_if(
        job->started, [&finished](std::uint32_t rank) { return !finished.contains(rank); });
    out.push_back(std::move(entry));
  }
  return out;
}

void JobManager::end_all(const std::string& reason) {
  for (auto& [id, job] : jobs_)
    fail(*job, 1, reason);
}

void JobManager::on_output(const JobOutput& output, Vpid from) {
  const OutputAck done{output.job, output.text.size()};
  auto found = jobs_.find(output.job);
  if (found == jobs_.end()) {
    if (hooks_.ack_output) hooks_.ack_output(from, done);  // nobody to hold it for
    return;
  }
  Job& job = *found->second;
  auto queued = job.events({{"event", "output"},
                            {"rank", output.rank},
                            {"stream", output.stream == OutputStream::out ? "out" : "err"},
                            {"text", output.text},
                            {"time_us", output.read_at_us}},
                           false);
  job.withheld[from] += done.bytes;
  // The CLI keeps up (or is gone, and the output with it): the daemon may
  // read on. Else the acknowledgement waits until the CLI has read, and the
  // daemon stops reading once its window is full: `grove run` sets the pace.
  if (!queued || *queued <= hooks_.output_window) {
    flush_acks(job);
    return;
  }
  if (!job.ack_timer) {
    job.ack_timer = Timer(base_, [this, &job] { on_ack_timer(job); });
    job.ack_timer.arm(kAckPollMs);
  }
}

void JobManager::flush_acks(Job& job) {
  job.ack_timer = Timer();
  auto withheld = std::move(job.withheld);
  job.withheld.clear();
  if (!hooks_.ack_output) return;
  for (const auto& [vpid, bytes] : withheld)
    hooks_.ack_output(vpid, OutputAck{job.id, bytes});
}

void JobManager::on_ack_timer(Job& job) {
  auto queued = job.events(nullptr, false);
  if (!queued || *queued <= hooks_.output_window) {
    flush_acks(job);
    return;
  }
  job.ack_timer.arm(kAckPollMs);
}

void JobManager::note_gone(Job& job, GoneRank rank) {
  job.gone_unsent.push_back(std::move(rank));
  if (job.gone_timer) return;
  job.gone_timer = Timer(base_, [this, &job] { on_gone_timer(job); });
  job.gone_timer.arm(kGoneGatheringMs);
}

void JobManager::on_gone_timer(Job& job) {
  RanksGone gone{job.id, std::move(job.gone_unsent)};
  job.gone_unsent.clear();
  job.gone_timer = Timer();  // frees this timer: nothing of it is used below
  // A failed job is being killed; a finished one is gone already.
  if (job.failed) return;
  hooks_.broadcast(job_tags::ranks_gone, encode(gone));
}

void JobManager::on_started(const RanksStarted& started) {
  auto found = jobs_.find(started.job);
  if (found == jobs_.end()) return;
  Job& job = *found->second;
  for (std::uint32_t rank : started.ranks) {
    if (rank < job.spec.ranks.size()) job.started.insert(rank);
  }
  // PMIx_Spawn returns once the job runs everywhere, as under PRRTE: a
  // spawner that connects to it at once finds it registered with its PMIx
  // server (answered earlier, libpmix 4.2 on one daemon sometimes released
  // half of a PMIx_Connect and never the rest).
  if (job.launched && job.started.size() == job.spec.ranks.size()) {
    auto launched = std::move(job.launched);
    job.launched = nullptr;
    launched(ok_status());
  }
}

void JobManager::on_exit(const RankExit& exit) {
  auto found = jobs_.find(exit.job);
  if (found == jobs_.end()) return;
  Job& job = *found->second;
  if (!job.finished.insert(exit.rank).second) return;
  if (hooks_.rank_exited) hooks_.rank_exited(job.spec.nspace, exit.rank);
  switch (exit.kind) {
    case ExitKind::exited:
      if (exit.status != 0) {
        const std::string why = "rank " + std::to_string(exit.rank) + " exited with status " +
                                std::to_string(exit.status);
        if (!job.failed) report_failure(job, exit.rank, RankFailure::exited, exit.status, why);
        fail(job, exit.status, why);
      } else {
        note_gone(job, GoneRank{exit.rank, exit.released});
      }
      break;
    case ExitKind::signaled: {
      const std::string why = "rank " + std::to_string(exit.rank) + " was killed by signal " +
                              std::to_string(exit.status) + " (" + exit.message + ")";
      // A rank killed because its job was already ending is no news (nor
      // is any other way of ending then).
      if (!job.failed) report_failure(job, exit.rank, RankFailure::signaled, exit.status, why);
      fail(job, 128 + exit.status, why);
      break;
    }
    case ExitKind::failed_start: {
      const std::string why =
          "rank " + std::to_string(exit.rank) + " never started: " + exit.message;
      report_failure(job, exit.rank, RankFailure::never_started, 127, why);
      fail(job, 127, why);
      break;
    }
    case ExitKind::left_without_finalize:
      // As PRRTE does: a rank that joined PMIx and left without finalizing
      // may hold up every fence of its job, so the job ends now.
      {
        const std::string why = "rank " + std::to_string(exit.rank) + " exited with status " +
                                std::to_string(exit.status) + " without calling PMIx_Finalize";
        if (!job.failed) {
          report_failure(job, exit.rank, RankFailure::left_without_finalize, exit.status, why);
        }
        fail(job, exit.status != 0 ? exit.status : 1, why);
      }
      break;
  }
  maybe_finish(exit.job);
}

void JobManager::on_abort(const JobAbort& abort) {
  auto found = jobs_.find(abort.job);
  if (found == jobs_.end()) return;
  const std::string why = "rank " + std::to_string(abort.rank) + " called PMIx_Abort with status " +
                          std::to_string(abort.status) +
                          (abort.message.empty() ? "" : ": " + abort.message);
  report_failure(*found->second, abort.rank, RankFailure::aborted, abort.status, why);
  fail(*found->second, abort.status == 0 ? 1 : abort.status, why);
}

void JobManager::on_daemon_lost(Vpid vpid) {
  std::vector<std::uint32_t> touched;
  for (auto& [id, job] : jobs_) {
    bool hosted = false;
    for (const RankPlacement& rank : job->spec.ranks) {
      if (rank.daemon != vpid) continue;
      hosted = true;
      job->finished.insert(rank.rank);  // its ranks died with it
    }
    settle_stdin(*job, vpid);
    if (!hosted) continue;
    fail(*job, 1,
         "daemon " + std::to_string(vpid) + " (" + hooks_.hostname(vpid) +
             "), which hosted ranks of this job, was lost");
    touched.push_back(id);
  }
  for (std::uint32_t id : touched)
    maybe_finish(id);
}

void JobManager::maybe_finish(std::uint32_t id) {
  auto found = jobs_.find(id);
  if (found == jobs_.end()) return;
  Job& job = *found->second;
  if (job.finished.size() < job.spec.ranks.size()) return;
  if (!job.children.empty()) return;  // it ends after the jobs it spawned
  settle_stdin(job, std::nullopt);
  if (job.launched) {  // every rank gone, some never reported as started
    auto launched = std::move(job.launched);
    job.launched = nullptr;
    launched(ok_status());
  }
  hooks_.broadcast(job_tags::cleanup, encode(JobRef{job.id}));
  if (hooks_.job_ended) {
    hooks_.job_ended(job.spec.nspace, job.failed ? job.status : 0, job.message);
  }
  nlohmann::json final_event{{"ok", true},
                             {"event", "exit"},
                             {"job", job.id},
                             {"status", job.failed ? job.status : 0},
                             {"message", job.message}};
  nlohmann::json ended = summary(job);
  ended["state"] = job.killed ? "killed" : job.failed ? "failed" : "done";
  log_.notice("jobs", "job %u (%s) ended after %lld s: %s, status %d%s%s", job.id,
              job.spec.nspace.c_str(), static_cast<long long>(std::time(nullptr) - job.started_s),
              ended["state"].get<std::string>().c_str(), job.failed ? job.status : 0,
              job.message.empty() ? "" : ": ", job.message.c_str());
  ended["status"] = job.failed ? job.status : 0;
  ended["ranks_running"] = 0;
  ended["ended"] = static_cast<std::int64_t>(std::time(nullptr));
  ended_.push_back(std::move(ended));
  if (ended_.size() > kRecentJobs) ended_.pop_front();
  JobEventFn events = std::move(job.events);
  jobs_.erase(found);
  events(final_event, true);
}

}  // namespace grove
