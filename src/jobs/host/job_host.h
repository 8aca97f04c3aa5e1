// The daemon side of a job: fork and exec this daemon's ranks, forward their
// output line by line and their exits to the controller, kill them on
// request. Runs on the daemon's event loop; ranks are this daemon's children.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "grpcomm/effects.h"
#include "jobs/host/job_directories.h"
#include "jobs/host/quiet_signal.h"
#include "jobs/host/rank_stdin.h"
#include "jobs/job_messages.h"
#include "os/event_ptr.h"
#include "os/fd.h"
#include "os/timer.h"
#include "util/log.h"

namespace grove {

// The CPUs a rank is bound to (--bind-to), and how to say so.
struct RankCpus {
  std::vector<int> cpus;
  std::string description;  // "core 1 (cpus 1)"
};

// What a JobHost asks of its daemon to start a rank: the PMIx server's part
// and the binding (daemon/rank_host.cc answers for both roles).
class RankSetup {
 public:
  using RankFailures = std::map<std::uint32_t, std::string>;
  virtual ~RankSetup() = default;
  // Readies these ranks of the job to start (the PMIx server's
  // registrations); `done` runs later, on the loop, with those that cannot
  // start and why.
  virtual void prepare_ranks(const JobSpec& spec, const std::vector<std::uint32_t>& ranks,
                             std::function<void(RankFailures)> done) = 0;
  // Extra environment for one rank (the PMIx server's, Open MPI's, PMI's),
  // and the rank's end of its PMI connection (handed down at kRankPmiFd;
  // invalid: none); an Error fails that rank's start.
  struct RankExtras {
    std::vector<std::string> env;
    Fd pmi;
  };
  virtual Result<RankExtras> rank_env(const JobSpec& spec, std::uint32_t rank) = 0;
  // Where the rank is bound; nothing: it runs on every CPU its daemon was
  // given. An Error fails that rank's start.
  virtual Result<std::optional<RankCpus>> rank_cpus(const JobSpec& spec, std::uint32_t rank) = 0;
  // Those of these ranks whose process tree holds a PMIx connection that
  // waits for the server's answer; a job's ranks are signalled only once
  // none does (jobs/host/quiet_signal.h).
  virtual std::set<pid_t> handshakes_pending(const std::vector<pid_t>& ranks) = 0;
};

// What a JobHost tells its daemon, in the order it happens: one stream of
// reports, each handed to one handler (as PmixRequests are, pmix/requests.h).
namespace job_host {
// A job was launched on the DVM (every daemon hears of every job, hosting
// or not), before any of its ranks here starts. `spec` lives for the call.
struct JobNoted {
  const JobSpec* spec = nullptr;
};
// The job is over here: its ranks are gone and it is forgotten.
struct JobForgotten {
  std::uint32_t job = 0;
  std::string nspace;
};
// The rank's process exists (pid) and has not exec'd yet: the PMIx server
// admits a rank's connection by the process that makes it.
struct RankForked {
  const JobSpec* spec = nullptr;
  std::uint32_t rank = 0;
  pid_t pid = -1;
};
// The rank's process has been waited for: its pid may be reused.
struct RankReaped {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
};
// Output, exits, and the ranks of a slice whose exec succeeded: for the
// controller (an exit is classified by the PMIx side on the way).
using Report =
    std::variant<JobNoted, JobForgotten, RankForked, RankReaped, JobOutput, RankExit, RanksStarted>;
using ReportFn = std::function<void(Report& report)>;
}  // namespace job_host

class JobHost {
 public:
  // `output_window`: bytes of a job's output this daemon passes on before the
  // controller has acknowledged them; past it the job's pipes are not read
  // (its ranks block on a full pipe) until acknowledgements bring it under
  // half. 0: no bound.
  // `setup` outlives the JobHost.
  JobHost(event_base* base, Vpid self, const Log& log, std::string session_dir, RankSetup& setup,
          job_host::ReportFn report, std::uint64_t output_window = 0);
  ~JobHost();

  // Handles the job broadcasts (launch, kill, cleanup); false for other tags.
  bool on_broadcast(std::uint16_t tag, std::span<const std::byte> payload);
  // Starts the ranks of `spec` placed on this daemon, in slices of at most
  // `slice_size()`, one slice per pass of the loop (job_host_launch.cc): a
  // large job never keeps the daemon from its heartbeats and frames.
  void launch(const JobSpec& spec);
  // Ranks started per slice: what the open-file limit allows to be held
  // before exec (four pipes each), at most 256.
  static std::size_t slice_size();
  // SIGTERM to every rank of the job, SIGKILL after `grace_ms`.
  void kill_job(std::uint32_t job, int grace_ms = 2000);
  // Forgets a finished job (its ranks have all exited).
  void forget(std::uint32_t job);
  // The controller has passed on `bytes` of the job's output.
  // Text a local rank asked its daemon to write to its job's output
  // (PMIx_Log), passed on as the rank's own output; false if the rank is not
  // one of this daemon's.
  bool log_output(std::uint32_t job, std::uint32_t rank, OutputStream stream, std::string text);
  void on_output_ack(std::uint32_t job, std::uint64_t bytes);
  // grove run's input for this daemon's reading ranks of the job; `ack` runs
  // once it is in their pipes (or they stopped reading).
  using StdinAckFn = std::function<void(const StdinAck&)>;
  void on_stdin(const JobStdin& input, StdinAckFn ack);
  // Reaps exited ranks; the daemon calls this on SIGCHLD.
  void reap();
  std::size_t running() const;
  // The job's directories (its own, its ranks', shared memory's).
  const JobDirectories& directories() const { return *directories_; }

 private:
  struct Rank;
  struct HeldRank;
  // A launch whose ranks here have not all started (job_host_launch.cc).
  struct Launch;
  void next_slice(std::uint32_t job);
  void run_slice(std::uint32_t job, std::vector<std::uint32_t> ranks,
                 RankSetup::RankFailures failed);
  void finish_launch(std::uint32_t job);
  // Reports a rank that was never forked: `why` it could not start, or
  // killed (by `signal`) with its job before its turn came.
  void never_forked(std::uint32_t job, std::uint32_t rank, const std::string& why, int signal = 0);
  // Starts the rank's process, held before it execs its program (null if
  // it could not start: reported).
  // `local_size`: the job's ranks on this daemon.
  std::unique_ptr<HeldRank> start_held(const JobSpec& spec, const RankPlacement& placement,
                                       std::uint32_t local_size);
  // Lets it exec; then (once every rank of the batch is let go) learns
  // whether the exec worked, and watches the rank's output.
  void let_go(HeldRank& forked);
  void watch_rank(const JobSpec& spec, HeldRank& forked);
  void on_readable(Rank& rank, int which);
  void maybe_report(Rank& rank);
  void emit_output(Rank& rank, OutputStream stream, std::string text);
  // Stops or starts reading every pipe of the job's ranks here.
  void set_job_reading(std::uint32_t job, bool reading);
  void erase_job(std::uint32_t job);
  // Ends the job's processes that left its ranks' groups and trees but kept
  // its environment (os/process_scan.h): every one once the job ended
  // everywhere (`ranks` null), else only those of these ranks.
  void end_stragglers(std::uint32_t job, const std::string& nspace,
                      const std::set<std::uint32_t>* ranks);
  void close_pipes_later(std::pair<std::uint32_t, std::uint32_t> key);
  // The process groups of the job's ranks still running here.
  std::vector<pid_t> live_groups(std::uint32_t job) const;
  // The job's ranks here that read grove run's stdin (job_host_stdin.cc).
  std::vector<RankStdin*> stdin_readers(std::uint32_t job) const;

  event_base* base_;
  std::string grove_exec_;  // the helper every rank starts as (rank_spawn.h), once found
  Vpid self_;
  const Log& log_;
  std::unique_ptr<JobDirectories> directories_;
  RankSetup& setup_;
  job_host::ReportFn report_;
  void report(job_host::Report report) { report_(report); }
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::unique_ptr<Rank>> ranks_;
  std::map<std::uint32_t, std::unique_ptr<Launch>> launches_;
  std::map<std::uint32_t, Timer> kill_timers_;    // SIGKILL after the grace
  std::map<std::uint32_t, std::string> nspaces_;  // every launched job until it is forgotten
  struct OutputFlow {
    std::uint64_t unacked = 0;  // passed on, not yet acknowledged
    bool paused = false;
    bool unbounded = false;  // being killed: drain whatever comes
  };
  std::uint64_t output_window_;
  std::map<std::uint32_t, OutputFlow> flows_;
  // Input for jobs whose launch has not arrived yet, or has not started
  // every rank here yet, in order.
  std::map<std::uint32_t, std::vector<std::pair<JobStdin, StdinAckFn>>> waiting_stdin_;
  std::uint32_t newest_launched_ = 0;
  std::unique_ptr<QuietSignaller> signaller_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // for deferred work
};

}  // namespace grove
