// The controller: vpid 0, the `grove start` process. It launches the other
// daemons, waits for their reports, broadcasts the endpoint table, is the
// membership authority (a lost connection or missed heartbeats make it
// declare a departure), serves the CLI on a Unix socket, and stops the DVM
// in order.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "control/control_request.h"
#include "control/control_socket.h"
#include "control/session_dir.h"
#include "daemon/control_plane/auto_flight_dumps.h"
#include "daemon/control_plane/cli_service.h"
#include "daemon/control_plane/control_messages.h"
#include "daemon/control_plane/job_table.h"
#include "daemon/control_plane/launch_supervisor.h"
#include "daemon/control_plane/roster.h"
#include "daemon/control_plane/stop_sequence.h"
#include "daemon/daemon_runtime.h"
#include "daemon/host_info.h"
#include "daemon/publish_service.h"
#include "daemon/rank_host.h"
#include "os/event_loop.h"
#include "os/timer.h"
#include "plm/bootstrap.h"
#include "plm/remote_launcher.h"
#include "plm/spawn_plan.h"
#include "pmix/spawn_messages.h"
#include "util/log.h"
#include "util/param_registry.h"
#include "util/show_help.h"

namespace grove {

struct ControllerOptions {
  std::uint32_t daemons = 2;  // including the controller itself
  std::string report_uri;     // write the DVM's URI here once ready
  std::string groved_path;
  // Daemons on other hosts; without a plan, `daemons` run on this host.
  std::optional<SpawnPlan> plan;
  RemoteLauncherKind launcher = RemoteLauncherKind::ssh;
  std::string prefix;    // --prefix / GROVE_PREFIX: the install on remote hosts
  bool one_job = false;  // started by `grove run` for its job (DvmInfo::one_job)
  // The file a background DVM logs to (grove status, grove log); empty: its
  // stderr, if that is a file (a tee to the terminal is a pipe).
  std::string log_path;
  // Called once: with an empty string when the DVM is ready, else an error.
  std::function<void(const std::string& error)> on_ready;
};

class Controller {
 public:
  Controller(const ParamRegistry& params, Log& log, HelpCatalog& help, ControllerOptions options);
  ~Controller();
  // Runs the DVM until it is stopped; returns the process exit code.
  int run();

 private:
  // controller_start.cc: the assembly.
  Status start();
  Status start_runtime();
  void make_roster();
  void watch_signals();
  Status start_rank_host();
  void start_job_table();
  // controller_launch.cc: starting the other daemons.
  Status launch_daemons();
  Status launch_local_daemons();
  Status launch_remote_daemons();
  RemoteSettings remote_settings() const;
  Status launch_over_ssh();
  // The parameters daemons started over ssh or srun get: ours, and our machine's boot id.
  std::vector<std::string> remote_param_arguments() const;
  Status launch_over_srun();
  void on_srun_exit(const std::string& how, const std::string& last_lines);
  void on_launch_failed(Vpid vpid, const std::string& reason);
  // Carries out the launch supervisor's decisions.
  void apply(start::Outbox out);
  std::string describe_daemon(Vpid vpid) const { return roster_->describe(vpid); }
  // Claims the tags the controller owns from the runtime, each for its
  // handler: the daemons' own messages, the CLI service's counters, the job
  // manager's reports, publish/lookup, spawn and PMIx events.
  void claim_tags();
  void on_daemon_message(Vpid from, std::uint16_t tag, const Bytes& payload);
  void on_report(Vpid from, const DaemonReport& report);
  void on_broadcast_done(const BroadcastDone& done);
  void on_help(const ShowHelpTopic& help);
  void on_peer_lost(Vpid peer);
  // `may_still_run`: lost to silence or a peer's report, not to its own
  // exit or closed connection; it is then told to leave.
  void daemon_lost(Vpid vpid, const std::string& reason, bool may_still_run = false);
  void on_link_lost(Vpid reporter, Vpid peer);
  void check_heartbeats();
  void reap_children();
  void become_ready();
  // Carries out the roster's decisions, in order.
  void apply(roster::Outbox out);
  void on_startup_loss(const std::string& message);
  void on_daemon_announced_lost(Vpid vpid, const std::string& description);
  // The start failed: end what was started, say why (FailStart).
  void fail_startup(const std::string& message);

  void on_job_message(Vpid from, std::uint16_t tag, const Bytes& payload);
  // controller_spawn.cc: PMIx_Spawn from a rank, forwarded by its daemon.
  void on_spawn(Vpid from, const Bytes& payload);
  // controller_jobs.cc: carrying out the job table's decisions.
  JobPlaces job_places() const;
  void submit_run(const RunRequest& run, ReplyFn reply, PartialFn partial);
  void spawn_job(const JobRequest& request, const SpawnMessage& message, Vpid from);
  void apply(job_table::Outbox out);
  void answer_spawn(const job_table::AnswerSpawn& answer);
  void arm_job_timer(const job_table::ArmTimer& arm);
  // An AckOutput or SendStdin: to a daemon, or to the controller's own rank host.
  void send_to_rank_host(const job_table::Effect& effect);
  // controller_shrink.cc: grove shrink, draining daemons until their jobs ended.
  void request_shrink(const ShrinkRequest& request, ReplyFn reply);
  void settle_drains();
  void drain_overdue(std::uint64_t id);
  void finish_drain(const std::vector<Vpid>& daemons, const ReplyFn& reply);
  // Answers the removals whose daemons are gone, and `due` (its wait is
  // over) whether or not they are.
  void settle_leaving(std::uint64_t due = 0);

  // controller_grow.cc: grove grow, daemons joining the running DVM.
  void request_grow(const GrowRequest& request, ReplyFn reply);
  // Each starts its daemons and returns those now launching.
  Result<std::vector<Vpid>> grow_local(std::uint32_t count);
  Result<std::vector<Vpid>> grow_hosts(const std::vector<GrowHost>& hosts);
  // controller_grow_slurm.cc: grove grow --activate, one more srun step.
  Result<std::vector<Vpid>> grow_activate(const std::vector<std::string>& nodes);
  // The allocation's nodes without a daemon, each new or back at its old vpid.
  struct ActivateTarget {
    HostEntry host;
    std::optional<Vpid> back;
  };
  Result<std::vector<ActivateTarget>> unused_allocation_nodes(
      const std::vector<std::string>& nodes);
  // Starts these joiners (consecutive vpids, the plan's hosts) in one srun
  // step; lost at once if srun cannot start.
  void start_srun_step(const std::vector<Vpid>& vpids);
  // Starts these vpids (new or revived) as joiners: on this host, or over
  // ssh from here. Those that could not be started are lost already.
  void start_local_joiner(Vpid vpid);
  void start_joiners_over_ssh(const std::vector<Vpid>& vpids);
  // controller_respawn.cc: dvm_respawn_lost, a lost daemon started again.
  void consider_respawn(Vpid vpid);
  // How long until a daemon declared lost while it may still run has
  // surely left by itself (it gives up on a silent controller); 0: now.
  std::int64_t eviction_wait_ms(Vpid vpid) const;
  // Whether a departed daemon's vpid may be started again now (its
  // predecessor surely gone), else why not: "daemon 2 (node2) ...".
  Status may_return(Vpid vpid) const;
  void respawn(Vpid vpid);
  void admit_joiner(roster::AdmitJoiner& admit);
  void grow_overdue();
  void finish_growth();

  // controller_requests.cc: the CLI's requests.
  void handle_request(const nlohmann::json& request, ReplyFn reply, PartialFn partial);
  void request_run(const RunRequest& run, ReplyFn reply, PartialFn partial);
  void request_kill(const KillRequest& request, ReplyFn reply);
  // Carries out the CLI service's decisions (status gathering, benchmarks);
  // its requesters are tokens for the replies held here.
  void apply(cli::Outbox out);
  std::uint64_t hold_reply(ReplyFn reply);
  ReplyFn take_reply(std::uint64_t requester);
  void reply_status(cli::ReplyStatus& status);
  void start_bench_round(const cli::Effect& round);
  void reply_bench(const cli::ReplyBench& bench);
  // controller_flight_dumps.cc: automatic flight dumps.
  std::string flight_dump_base() const;  // grpcomm_flight_dump_dir, or its default
  // Our parameters as a daemon we start gets them (with the dump directory).
  std::vector<std::string> daemon_param_arguments() const;
  void start_flight_dumps();
  // A problem seen at `where` (a daemon's report, or the controller's own).
  void on_problem(Vpid where, const std::string& text);
  // The newest dump's gathering (grove status --dump's), once no plain
  // status is being gathered, trying `attempts` times.
  void gather_flight_dump(int attempts);
  void check_stalled_broadcast();
  void automatic_dump_answered(const nlohmann::json& reply);
  void write_problems(const AutoFlightDumps::Dump& dump);
  nlohmann::json flight_dumps_json() const;
  // controller_stop.cc: carrying out the stop sequence.
  void begin_stop(ReplyFn reply, const std::string& reason);
  void apply(stop::Outbox out);
  void end_work(const std::string& reason);
  void arm_stop_timer(StopTimer timer, std::int64_t delay_ms);
  void kill_stragglers();
  bool reap_after_close();  // whether anything still runs
  void complete_stop();     // everything ended: clean up, answer, leave
  nlohmann::json status_json() const;

  const ParamRegistry& params_;
  Log& log_;
  HelpCatalog& help_;
  ControllerOptions options_;
  std::optional<EventLoop> loop_;  // from start() on
  std::unique_ptr<DaemonRuntime> runtime_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<HostTopology> topology_;  // loaded once; the PMIx server shares it
  std::unique_ptr<RankHost> rank_host_;
  std::unique_ptr<PublishService> publish_;  // the DVM's PMIx publish/lookup store
  RemoteLaunchers remote_;                   // ssh clients or the srun step, and grown ones
  std::optional<DaemonRoster> roster_;       // from start() on
  // This DVM as its daemons and commands find and join it.
  struct Identity {
    DvmInfo dvm;  // its session directory and socket
    std::vector<std::byte> secret;
    std::string endpoint;  // the controller's, as daemons reach it
  };
  Identity identity_;
  Timer heartbeat_timer_;  // each Timer and SignalWatch owns its callback (os/timer.h)

  // The start, decided by its supervisor; and daemons grown in later.
  struct Growth {
    ReplyFn reply;
    std::vector<Vpid> waiting;  // launched, not yet joined
    std::vector<Vpid> joined;
  };
  // dvm_respawn_lost: a vpid's respawns so far, the next one's timer, and
  // the deadline of the one under way.
  struct Respawn {
    std::uint32_t count = 0;
    Timer timer, deadline;
  };
  struct Launching {
    explicit Launching(LaunchSupervisor decides) : supervisor(std::move(decides)) {}
    LaunchSupervisor supervisor;
    // grow_deadline: a joiner that never reports is given up (made once,
    // then armed and cancelled: it ends growths from inside its callback).
    Timer report_deadline, failure_timer, step_end_timer, grow_deadline;
    std::uint64_t endpoint_table_op = 0;  // its broadcast, once every daemon is up
    std::optional<Growth> growth;         // grove grow, one at a time
    std::map<Vpid, Respawn> respawns;
    std::map<Vpid, TimeNs> evicted_ns;  // when each was told to leave (it may still run)
  };
  Launching launch_;
  // The stop, decided by its sequence; who asked for it.
  struct Stopping {
    explicit Stopping(StopSequence decides) : sequence(std::move(decides)) {}
    StopSequence sequence;
    std::array<Timer, 4> timers;  // by StopTimer
    std::vector<ReplyFn> replies;
    // Once stopped: what every stop request is answered, those that come
    // in the last moments included.
    std::optional<nlohmann::json> answer;
    // Once stopped: the loop ends when every control client has its answer
    // and is gone, or after 100 ms (what is due in them still runs).
    Timer exit_when_answered;
    int exit_checks = 0;
    std::uint64_t shutdown_op = 0;
    int exit_code = 0;  // the controller's
  };
  Stopping stopping_;
  // Automatic flight dumps, decided by their policy, each gathered as
  // grove status --dump is; the stall watch over the controller's
  // broadcasts (grpcomm_flight_dump_stall_ms) and the last broadcast it
  // reported, by topology and op id.
  struct FlightDumps {
    AutoFlightDumps policy{{}, 0};
    TimeNs stall_ns = 0;
    Timer stall_watch;
    std::optional<std::pair<TopologyKind, std::uint64_t>> stalled;
  };
  // grove status and grove bench, decided by the CLI service; the replies
  // its requester tokens stand for; the automatic flight dumps.
  struct CliRequests {
    CliService service;
    std::array<Timer, 2> timers;  // by CliTimer
    std::map<std::uint64_t, ReplyFn> replies;
    std::uint64_t next_requester = 1;
    FlightDumps flight;
  };
  CliRequests cli_;
  // The jobs, decided by the job table; who waits for their answers.
  using JobTimerKey = std::pair<std::uint32_t, job_table::TimerKind>;
  struct SpawnAsker {
    Vpid from = 0;  // the spawning rank's daemon
    std::uint64_t handle = 0;
    std::uint32_t rank = 0;
    std::string nspace;
    std::string program;
  };
  struct Jobs {
    explicit Jobs(JobTable decides) : table(std::move(decides)) {}
    JobTable table;
    std::map<JobTimerKey, Timer> timers;
    std::map<Requester, PartialFn> partials;  // a grove run's; its reply is in cli_.replies
    std::map<Requester, SpawnAsker> spawns;
    Requester next_spawn = 1;
    // grove shrink: daemons that leave once these jobs (with ranks on them) ended.
    struct Drain {
      std::uint64_t id = 0;
      std::vector<Vpid> daemons;
      std::set<std::uint32_t> jobs;
      ReplyFn reply;
      Timer deadline;  // the jobs had their time to end: the daemons leave anyway
    };
    std::vector<Drain> drains;
    std::uint64_t next_drain = 1;
    // Removed, answered once each has closed its connection (or after a
    // while): a grove grow --host that follows finds them gone.
    struct Leaving {
      std::uint64_t id = 0;
      std::vector<Vpid> daemons;
      ReplyFn reply;
      nlohmann::json answer;
    };
    std::vector<Leaving> leaving;
    std::uint64_t next_leaving = 1;
  };
  std::optional<Jobs> jobs_;
  struct Signals {
    SignalWatch interrupt, terminate, child;
  };
  Signals signals_;
  std::vector<TagClaim> claims_;  // released before the runtime goes
};

}  // namespace grove
