// The controller's job table: map ranks onto daemons, launch, gather output
// and exits, decide each job's status, end a job on its first failure, an
// abort, its timeout or a lost daemon, and clean up. Sans-IO like the
// roster: inputs are requests, the daemons' job messages, fired timers and
// the wall clock (seconds, for grove ps); outputs are effects the
// controller carries out. The simulator drives the same table.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "jobs/job_messages.h"
#include "jobs/job_request.h"
#include "util/result.h"

namespace grove {

// How a rank ended badly (job_table::RankFailed).
enum class RankFailure { aborted, exited, signaled, left_without_finalize, never_started };

// Who waits for a job's events (a grove run), for a spawn's answer or for
// an input's: a token the driver maps to its socket or daemon.
using Requester = std::uint64_t;

// What the job table asks of its driver, in order.
namespace job_table {

struct Broadcast {
  std::uint16_t tag = 0;
  Bytes payload;
};
// Output passed on (or dropped): the daemon that sent it may read more.
struct AckOutput {
  Vpid daemon = 0;
  OutputAck ack;
};
// grove run's input for the reading ranks on one daemon.
struct SendStdin {
  Vpid daemon = 0;
  JobStdin input;
};
// An event for the grove run of a job: partial ones while it runs (started,
// output), then the final one (its exit, or why it never started).
struct CliEvent {
  Requester requester = 0;
  nlohmann::json event;
  bool final = false;
};
// Output waits for the CLI to read: the driver measures what is still
// queued to `requester` and hands it to JobTable::cli_queue(job, ...).
struct CheckCliQueue {
  std::uint32_t job = 0;
  Requester requester = 0;
};
// A rank of a job exited (however).
struct RankExited {
  std::string nspace;
  std::uint32_t rank = 0;
};
// The nspace and rank that spawned a job (PMIx_Spawn), if one did.
using SpawnedBy = std::optional<std::pair<std::string, std::uint32_t>>;
// A rank called PMIx_Abort or ended badly, and its job ends of it:
// `status` is the abort's or exit status, or the signal.
struct RankFailed {
  std::string nspace;
  std::uint32_t rank = 0;
  RankFailure how = RankFailure::exited;
  int status = 0;
  std::string message;
  SpawnedBy spawned_by;
};
// Every rank of the job is gone (just before its end is reported).
struct JobEnded {
  std::string nspace;
  int status = 0;
  std::string message;
  SpawnedBy spawned_by;
};
// PMIx_Spawn's answer: the job runs (every rank started), or why not
// (`nspace` empty: it was refused and never launched).
struct AnswerSpawn {
  Requester requester = 0;
  std::string nspace;
  Status launched;
};
// grove run's input reached every daemon hosting a reading rank: whether
// any still reads.
struct AnswerStdin {
  Requester requester = 0;
  bool open = false;
};
enum class TimerKind : std::uint8_t { timeout, ack_poll, gone_gathering };
struct ArmTimer {
  std::uint32_t job = 0;
  TimerKind kind = TimerKind::timeout;
  std::int64_t ms = 0;
};
struct CancelTimer {
  std::uint32_t job = 0;
  TimerKind kind = TimerKind::timeout;
};
struct Notice {
  // `jobs`: the DVM's log of every job, at its default verbosity.
  enum class Level : std::uint8_t { jobs, verbose } level = Level::verbose;
  std::string text;
};

using Effect =
    std::variant<Broadcast, AckOutput, SendStdin, CliEvent, CheckCliQueue, RankExited, RankFailed,
                 JobEnded, AnswerSpawn, AnswerStdin, ArmTimer, CancelTimer, Notice>;
using Outbox = std::vector<Effect>;

// Ranks of a job tend to leave together: their exits go out as one broadcast.
inline constexpr std::int64_t kGoneGatheringMs = 20;
// How often the CLI's queue is looked at while acknowledgements wait for it.
inline constexpr std::int64_t kAckPollMs = 10;

}  // namespace job_table

struct JobTableConfig {
  std::string nspace_prefix = "grove";  // jobs are <prefix>.1, <prefix>.2, ...
  // Bytes queued to the CLI past which acknowledgements wait (jobs_output_window).
  std::uint64_t output_window = 4 << 20;
};

// The daemons a job may run on, as the roster sees them now.
struct JobPlaces {
  std::vector<MapDaemon> living;  // holding ranks, ascending vpid
  std::string controller_host;    // what localhost names in -H
};

class JobTable {
 public:
  explicit JobTable(JobTableConfig config);
  JobTable(JobTable&&) noexcept;
  JobTable& operator=(JobTable&&) noexcept;
  ~JobTable();

  // The membership epoch now (the driver says so before each submit and
  // spawn): jobs launched from here on are placed in it.
  void set_epoch(std::uint64_t epoch) { epoch_ = epoch; }
  // A grove run: launched, or refused with a final CliEvent.
  job_table::Outbox submit(const JobRequest& request, Requester requester, const JobPlaces& places,
                           std::int64_t now_s);
  // A job spawned by a rank of a running job (PMIx_Spawn). Its output goes
  // to the CLI of the job that spawned it, its failure fails that job, and
  // that job ends only after it. It has that job's environment (then the
  // request's) and its directory unless the request names one. Answered
  // (AnswerSpawn) when every rank of it has started, so every daemon
  // hosting one has registered it with its PMIx server, or with why it
  // ended before, or at once if it cannot start.
  job_table::Outbox spawn(const JobRequest& request, const std::string& parent_nspace,
                          std::uint32_t parent_rank, Requester requester,
                          const std::vector<MapDaemon>& living, std::int64_t now_s);
  // Output of the job from daemon `from`, passed to the CLI; acknowledged
  // to `from` once the CLI has read enough of what is queued to it.
  job_table::Outbox on_output(const JobOutput& output, Vpid from);
  // What the driver measured for a CheckCliQueue (nothing: the CLI is gone).
  job_table::Outbox cli_queue(std::uint32_t job, std::optional<std::size_t> queued);
  // Ranks a daemon has exec'd; until then grove ps does not count them running.
  job_table::Outbox on_started(const RanksStarted& started);
  job_table::Outbox on_exit(const RankExit& exit, std::int64_t now_s);
  job_table::Outbox on_abort(const JobAbort& abort);
  // `description`: "daemon 3 (node3)".
  job_table::Outbox on_daemon_lost(Vpid vpid, const std::string& description, std::int64_t now_s);
  job_table::Outbox timer_fired(std::uint32_t job, job_table::TimerKind kind);
  // Ends a job (its ranks get SIGTERM, then SIGKILL) with this status and
  // reason; nothing (not found) if no such job runs.
  std::optional<job_table::Outbox> kill(std::uint32_t job, int status, const std::string& reason);
  // Sends `signal` to every running rank of a job, which goes on unless its
  // ranks end of it; nothing if no such job runs.
  std::optional<job_table::Outbox> signal(std::uint32_t job, int signal);
  // grove run's input (`eof`: its end) for the job's reading ranks,
  // answered (AnswerStdin) once every daemon hosting one has it in their
  // pipes; at once with false if the job reads none or is gone.
  job_table::Outbox forward_stdin(std::uint32_t job, std::string data, bool eof,
                                  Requester requester);
  job_table::Outbox on_stdin_ack(Vpid from, const StdinAck& ack);
  // Ends every job (the DVM is stopping).
  job_table::Outbox end_all(const std::string& reason);

  // The nspace the next job launched will have.
  std::string next_nspace() const;
  // The running jobs with ranks on any of these daemons, as "job 3
  // (grove.123.3)" by id (grove shrink).
  std::map<std::uint32_t, std::string> jobs_on(const std::set<Vpid>& daemons) const;
  bool runs(std::uint32_t job) const { return jobs_.contains(job); }
  std::size_t active() const { return jobs_.size(); }
  // The nspace and rank that spawned a running job (PMIx_Spawn); nothing
  // for a job grove run started, or one not running.
  job_table::SpawnedBy spawned_by(const std::string& nspace) const;
  // The running jobs, then the last kRecentJobs ended ones, oldest first:
  // what `grove ps` and `grove status` show.
  nlohmann::json jobs_json() const;
  static constexpr std::size_t kRecentJobs = 32;

 private:
  struct Job;
  struct Launch;
  Job& launch(Launch launch, job_table::Outbox& out);
  void fail(Job& job, int status, const std::string& message, job_table::Outbox& out);
  void report_failure(const Job& job, std::uint32_t rank, RankFailure how, int status,
                      const std::string& message, job_table::Outbox& out) const;
  void maybe_finish(std::uint32_t id, std::int64_t now_s, job_table::Outbox& out);
  // A spawned job ended: its parent may end too, and fails if it failed.
  void child_ended(std::uint32_t parent, std::uint32_t child, int status,
                   const std::string& message, std::int64_t now_s, job_table::Outbox& out);
  // The grove run a job's events go to: its own, or its spawner's.
  std::optional<Requester> cli_of(const Job& job) const;
  void flush_acks(Job& job, job_table::Outbox& out);
  // Answers the job's input still waiting for daemons; `lost`: only those
  // waiting for that daemon, which will not answer (none: every one).
  void settle_stdin(Job& job, std::optional<Vpid> lost, job_table::Outbox& out);
  // Cores the running jobs' ranks take on each host (bound or not), and
  // the cores running core-bound jobs hold (binding_policy.h).
  std::map<std::string, std::uint64_t> cores_in_use() const;
  std::map<std::string, std::set<std::uint32_t>> cores_taken(
      const std::vector<MapDaemon>& daemons) const;
  Job* find(std::uint32_t id);
  Job* find_nspace(const std::string& nspace);

  JobTableConfig config_;
  std::uint32_t next_job_ = 1;
  std::uint64_t epoch_ = UINT64_MAX;  // set_epoch; not stated until then
  std::map<std::uint32_t, std::unique_ptr<Job>> jobs_;
  std::deque<nlohmann::json> ended_;  // at most kRecentJobs, oldest first
};

}  // namespace grove
