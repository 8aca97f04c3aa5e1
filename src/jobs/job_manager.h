// The controller's side of jobs: map ranks onto daemons, broadcast the
// launch, gather output and exits, decide the job's status, end the job on
// the first failure, an abort, a timeout or a lost daemon, and clean up.
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "jobs/job_messages.h"
#include "jobs/job_request.h"
#include "os/event_ptr.h"
#include "util/log.h"
#include "util/result.h"

namespace grove {

// Job events for the CLI: partial ones while it runs, then the final one.
// Returns the bytes still queued to the CLI (nothing once it is gone); a
// null partial event sends nothing and only reports.
using JobEventFn =
    std::function<std::optional<std::size_t>(const nlohmann::json& event, bool final)>;

// How a rank ended badly (JobManagerHooks::rank_failed).
enum class RankFailure { aborted, exited, signaled, left_without_finalize, never_started };

struct JobManagerHooks {
  std::function<std::vector<MapDaemon>()> living_daemons;  // ascending vpid
  std::function<std::string(Vpid)> hostname;
  std::function<void(std::uint16_t tag, const Bytes& payload)> broadcast;
  // Output passed on (or dropped): the daemon that sent it may read more.
  std::function<void(Vpid daemon, const OutputAck& ack)> ack_output;
  // A rank of the job exited (however); the whole job ended (its ranks all
  // exited), just before its end is reported. Either may be left empty.
  std::function<void(const std::string& nspace, std::uint32_t rank)> rank_exited;
  // A rank called PMIx_Abort or ended badly (its job is ending because of
  // it): `status` is the abort's or exit status, or the signal.
  std::function<void(const std::string& nspace, std::uint32_t rank, RankFailure how, int status,
                     const std::string& message)>
      rank_failed;
  std::function<void(const std::string& nspace, int status, const std::string& message)> job_ended;
  // grove run's input for the reading ranks on one daemon.
  std::function<void(Vpid daemon, const JobStdin& input)> send_stdin;
  // Bytes queued to the CLI past which acknowledgements wait (jobs_output_window).
  std::uint64_t output_window = 4 << 20;
};

class JobManager {
 public:
  JobManager(event_base* base, const Log& log, std::string nspace_prefix, JobManagerHooks hooks);
  ~JobManager();

  void submit(const JobRequest& request, JobEventFn events);
  // A job spawned by a rank of a running job (PMIx_Spawn). Its output goes
  // to the CLI of the job that spawned it, its failure fails that job, and
  // that job ends only after it. It has that job's environment (then the
  // request's) and its directory unless the request names one. The new
  // job's nspace, launched, or why it cannot start. `launched` runs once:
  // when every rank of it has started (so every daemon hosting one has
  // registered it with its PMIx server), or with why it ended before.
  Result<std::string> spawn(const JobRequest& request, const std::string& parent_nspace,
                            std::uint32_t parent_rank, std::function<void(Status)> launched = {});
  // The nspace the next job launched will have.
  std::string next_nspace() const { return nspace_prefix_ + "." + std::to_string(next_job_); }
  // Output of the job from daemon `from`, passed to the CLI; acknowledged
  // to `from` at once, or once the CLI has read what is queued to it.
  void on_output(const JobOutput& output, Vpid from);
  // Ranks a daemon has exec'd; until then grove ps does not count them running.
  void on_started(const RanksStarted& started);
  void on_exit(const RankExit& exit);
  void on_abort(const JobAbort& abort);
  void on_daemon_lost(Vpid vpid);
  // Ends a job (its ranks get SIGTERM, then SIGKILL) with this status and
  // reason; false if no such job runs.
  bool kill(std::uint32_t job, int status, const std::string& reason);
  // Sends `signal` to every running rank of a job, which goes on unless its
  // ranks end of it; false if no such job runs.
  bool signal(std::uint32_t job, int signal);
  std::size_t active() const { return jobs_.size(); }
  // The nspace and rank that spawned a running job (PMIx_Spawn); nothing
  // for a job grove run started, or one not running.
  std::optional<std::pair<std::string, std::uint32_t>> spawned_by(const std::string& nspace) const;
  // The running jobs, then the last kRecentJobs ended ones, oldest first:
  // what `grove ps` and `grove status` show.
  nlohmann::json jobs_json() const;
  // grove run's input (`eof`: its end) for the job's reading ranks: `done`
  // runs once every daemon hosting one has it in their pipes, with whether
  // any still reads; at once with false if the job reads none or is gone.
  void forward_stdin(std::uint32_t job, std::string data, bool eof,
                     std::function<void(bool open)> done);
  void on_stdin_ack(Vpid from, const StdinAck& ack);
  static constexpr std::size_t kRecentJobs = 32;
  // Ends every job (the DVM is stopping).
  void end_all(const std::string& reason);

 private:
  struct Job;
  Job& launch(const JobRequest& request, const JobMap& map, JobEventFn events, Job* parent,
              std::uint32_t parent_rank);
  // The events of a spawned job, passed on to the job that spawned it.
  JobEventFn spawned_events(std::uint32_t parent, std::uint32_t child);
  void child_ended(std::uint32_t parent, std::uint32_t child, const nlohmann::json& final_event);
  void report_failure(const Job& job, std::uint32_t rank, RankFailure how, int status,
                      const std::string& message);
  void fail(Job& job, int status, const std::string& message);
  void maybe_finish(std::uint32_t id);
  void on_ack_timer(Job& job);
  // A rank exited cleanly while others may run: the daemons hear of it (a
  // fence including it must end with an error, not wait).
  void note_gone(Job& job, GoneRank rank);
  void on_gone_timer(Job& job);
  void flush_acks(Job& job);
  // What running and ended jobs share in jobs_json().
  static nlohmann::json summary(const Job& job);
  // Cores the running jobs' ranks take on each host (bound or not).
  std::map<std::string, std::uint64_t> cores_in_use() const;
  // The cores running core-bound jobs hold, by host (binding_policy.h).
  std::map<std::string, std::set<std::uint32_t>> cores_taken(
      const std::vector<MapDaemon>& daemons) const;
  // Answers the job's input still waiting for daemons; `lost`: only those
  // waiting for that daemon, which will not answer (none: every one).
  void settle_stdin(Job& job, std::optional<Vpid> lost);

  event_base* base_;
  const Log& log_;
  std::string nspace_prefix_;
  JobManagerHooks hooks_;
  std::uint32_t next_job_ = 1;
  std::map<std::uint32_t, std::unique_ptr<Job>> jobs_;
  std::deque<nlohmann::json> ended_;  // at most kRecentJobs, oldest first
};

}  // namespace grove
