#include "jobs/job_manager.h"

#include <set>

namespace grove {

struct JobManager::Job {
  JobManager* manager = nullptr;
  std::uint32_t id = 0;
  JobSpec spec;
  JobEventFn events;
  std::set<std::uint32_t> finished;  // ranks known to be gone
  bool failed = false;
  int status = 0;
  std::string message;
  EventPtr timer;
  std::map<Vpid, std::uint64_t> withheld;  // output bytes not yet acknowledged, by daemon
  EventPtr ack_timer;                      // polls the CLI's queue while acks wait
  std::vector<GoneRank> gone_unsent;       // clean exits the daemons have not heard of
  EventPtr gone_timer;                     // gathers them into one broadcast
};

namespace {
// Ranks of a job tend to leave together: their exits go out as one broadcast.
constexpr timeval kGoneGathering{0, 20 * 1000};
}  // namespace

JobManager::JobManager(event_base* base, const Log& log, std::string nspace_prefix,
                       JobManagerHooks hooks)
    : base_(base), log_(log), nspace_prefix_(std::move(nspace_prefix)), hooks_(std::move(hooks)) {}

JobManager::~JobManager() = default;

void JobManager::submit(const JobRequest& request, JobEventFn events) {
  auto daemons = hooks_.living_daemons();
  auto map = map_ranks(request.np, daemons, request.policy);
  if (!map) {
    events({{"ok", false}, {"error", map.error().message}}, true);
    return;
  }
  auto job = std::make_unique<Job>();
  job->manager = this;
  job->id = next_job_++;
  job->events = std::move(events);
  JobSpec& spec = job->spec;
  spec.job = job->id;
  spec.nspace = nspace_prefix_ + "." + std::to_string(job->id);
  spec.argv = request.argv;
  spec.env = request.env;
  spec.cwd = request.cwd;
  spec.ranks = map->ranks;
  for (Vpid vpid : map->daemons)
    spec.hostnames.push_back(hooks_.hostname(vpid));
  spec.node_slots = map->node_slots;
  spec.map_by = map_policy_text(request.policy);
  job->events({{"ok", true},
               {"event", "started"},
               {"job", job->id},
               {"nspace", spec.nspace},
               {"np", request.np},
               {"daemons", map->daemons},
               {"oversubscribed", map->oversubscribed}},
              false);
  log_.verbose("daemon", 1, "job %u (%s): %u ranks on %zu daemons", job->id, spec.nspace.c_str(),
               request.np, map->daemons.size());
  if (request.timeout_s > 0) {
    job->timer.reset(event_new(base_, -1, 0, &JobManager::on_timeout, job.get()));
    timeval delay{static_cast<time_t>(request.timeout_s), 0};
    event_add(job->timer.get(), &delay);
  }
  Bytes launch = encode(spec);
  jobs_[job->id] = std::move(job);
  hooks_.broadcast(job_tags::launch, launch);
}

void JobManager::on_timeout(evutil_socket_t, short, void* arg) {
  auto* job = static_cast<Job*>(arg);
  job->manager->fail(*job, 124, "the job ran out of time (--timeout) and was killed");
}

void JobManager::fail(Job& job, int status, const std::string& message) {
  if (job.failed) return;
  job.failed = true;
  job.status = status;
  job.message = message;
  log_.verbose("daemon", 1, "job %u ends: %s", job.id, message.c_str());
  hooks_.broadcast(job_tags::kill, encode(JobRef{job.id}));
}

bool JobManager::kill(std::uint32_t id, const std::string& reason) {
  auto found = jobs_.find(id);
  if (found == jobs_.end()) return false;
  fail(*found->second, 130, reason);
  return true;
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
                            {"text", output.text}},
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
    job.ack_timer.reset(event_new(base_, -1, 0, &JobManager::on_ack_timer, &job));
    timeval poll{0, 10 * 1000};
    event_add(job.ack_timer.get(), &poll);
  }
}

void JobManager::flush_acks(Job& job) {
  job.ack_timer.reset();
  auto withheld = std::move(job.withheld);
  job.withheld.clear();
  if (!hooks_.ack_output) return;
  for (const auto& [vpid, bytes] : withheld)
    hooks_.ack_output(vpid, OutputAck{job.id, bytes});
}

void JobManager::on_ack_timer(evutil_socket_t, short, void* arg) {
  auto* job = static_cast<Job*>(arg);
  auto queued = job->events(nullptr, false);
  if (!queued || *queued <= job->manager->hooks_.output_window) {
    job->manager->flush_acks(*job);
    return;
  }
  timeval poll{0, 10 * 1000};
  event_add(job->ack_timer.get(), &poll);
}

void JobManager::note_gone(Job& job, GoneRank rank) {
  job.gone_unsent.push_back(std::move(rank));
  if (job.gone_timer) return;
  job.gone_timer.reset(event_new(base_, -1, 0, &JobManager::on_gone_timer, &job));
  event_add(job.gone_timer.get(), &kGoneGathering);
}

void JobManager::on_gone_timer(evutil_socket_t, short, void* arg) {
  auto* job = static_cast<Job*>(arg);
  RanksGone gone{job->id, std::move(job->gone_unsent)};
  job->gone_unsent.clear();
  job->gone_timer.reset();  // frees this event: nothing of it is used below
  // A failed job is being killed; a finished one is gone already.
  if (job->failed) return;
  job->manager->hooks_.broadcast(job_tags::ranks_gone, encode(gone));
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
        fail(job, exit.status,
             "rank " + std::to_string(exit.rank) + " exited with status " +
                 std::to_string(exit.status));
      } else {
        note_gone(job, GoneRank{exit.rank, exit.released});
      }
      break;
    case ExitKind::signaled:
      fail(job, 128 + exit.status,
           "rank " + std::to_string(exit.rank) + " was killed by signal " +
               std::to_string(exit.status) + " (" + exit.message + ")");
      break;
    case ExitKind::failed_start:
      fail(job, 127, "rank " + std::to_string(exit.rank) + " never started: " + exit.message);
      break;
    case ExitKind::left_without_finalize:
      // As PRRTE does: a rank that joined PMIx and left without finalizing
      // may hold up every fence of its job, so the job ends now.
      fail(job, exit.status != 0 ? exit.status : 1,
           "rank " + std::to_string(exit.rank) + " exited with status " +
               std::to_string(exit.status) + " without calling PMIx_Finalize");
      break;
  }
  maybe_finish(exit.job);
}

void JobManager::on_abort(const JobAbort& abort) {
  auto found = jobs_.find(abort.job);
  if (found == jobs_.end()) return;
  fail(*found->second, abort.status == 0 ? 1 : abort.status,
       "rank " + std::to_string(abort.rank) + " called PMIx_Abort with status " +
           std::to_string(abort.status) + (abort.message.empty() ? "" : ": " + abort.message));
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
  hooks_.broadcast(job_tags::cleanup, encode(JobRef{job.id}));
  if (hooks_.job_ended) hooks_.job_ended(job.spec.nspace);
  nlohmann::json final_event{{"ok", true},
                             {"event", "exit"},
                             {"job", job.id},
                             {"status", job.failed ? job.status : 0},
                             {"message", job.message}};
  JobEventFn events = std::move(job.events);
  jobs_.erase(found);
  events(final_event, true);
}

}  // namespace grove
