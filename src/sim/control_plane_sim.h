// The control plane's liveness in virtual time: the controller's roster and
// every daemon's ControllerWatch (the same state machines the real daemons
// run) exchange heartbeats, answers, evictions and link reports over a
// modelled network, while scripted faults stall, partition or crash
// processes. Jobs go through the controller's job table (the same machine
// again) to modelled rank hosts. What the run records is who decided what,
// and when: the controller declaring a daemon lost, a daemon leaving the
// DVM, a job ending (with its status and why).
// Deterministic: one seed (split per subsystem) fixes every timing.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "daemon/control_plane/roster.h"

namespace grove {

inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

struct ControlPlaneFaults {
  // SIGSTOP at `from`, SIGCONT at `to` (kNever: hung for good); vpid 0 is the
  // controller. What reaches a stalled process waits in its socket buffers.
  struct Stall {
    Vpid vpid = 1;
    TimeNs from_ns = 0;
    TimeNs to_ns = kNever;
  };
  // The direct link between two daemons fails; each end notices after
  // link_timeout and reports it to the controller (a LinkLost).
  struct Partition {
    Vpid a = 1;
    Vpid b = 2;
    TimeNs at_ns = 0;
  };
  // The process ends; its peers see its connections close (vpid 0: the
  // controller dies).
  struct Crash {
    Vpid vpid = 1;
    TimeNs at_ns = 0;
  };
  std::vector<Stall> stalls;
  std::vector<Partition> partitions;
  std::vector<Crash> crashes;
};

// A grove run, submitted to the controller's job table at `submit_at_ns`.
// Each daemon's rank host is modelled: its ranks of the job start
// `rank_start_ns` after the launch reaches it, run `run_ns` and exit 0 (the
// failing rank, if any: `failing_status`); a kill ends them at once
// (SIGTERM); they live in their daemon's process (a crash takes them, a
// stall holds their exits back).
struct SimJob {
  TimeNs submit_at_ns = 0;
  std::uint32_t np = 1;
  TimeNs run_ns = 1'000'000'000;
  std::uint32_t timeout_s = 0;  // --timeout
  std::optional<std::uint32_t> failing_rank;
  int failing_status = 1;
};

struct ControlPlaneSimOptions {
  std::uint32_t daemons = 8;                      // the controller included
  TimeNs heartbeat_interval_ns = 500'000'000;     // daemon_heartbeat_ms
  std::uint32_t heartbeat_misses = 10;            // daemon_heartbeat_misses
  TimeNs controller_timeout_ns = 30'000'000'000;  // daemon_controller_timeout_ms
  TimeNs latency_ns = 100'000;
  TimeNs jitter_ns = 50'000;  // added per message, uniform; links stay FIFO
  TimeNs link_timeout_ns = 1'000'000'000;
  TimeNs duration_ns = 60'000'000'000;
  std::uint64_t seed = 1;
  ControlPlaneFaults faults;
  std::vector<SimJob> jobs;
  std::uint32_t slots_per_daemon = 2;  // the controller's host included
  TimeNs rank_start_ns = 2'000'000;
};

struct ControlPlaneDecision {
  enum class Kind : std::uint8_t { lost, left };
  TimeNs at_ns = 0;
  Vpid vpid = 0;
  Kind kind = Kind::lost;  // lost: the controller's verdict; left: the daemon's own
  std::string reason;
  bool operator==(const ControlPlaneDecision&) const = default;
};

// A job's end as its grove run heard it.
struct SimJobEnd {
  TimeNs at_ns = 0;
  std::uint32_t job = 0;
  int status = 0;
  std::string message;
};

struct ControlPlaneSimResult {
  std::vector<ControlPlaneDecision> decisions;  // in time order
  std::vector<SimJobEnd> jobs_ended;            // in time order
  std::vector<DaemonStateKind> states;          // the roster's view at the end
  std::vector<bool> running;                    // each process, at the end
  std::uint64_t events = 0;
  std::uint64_t ranks_started = 0;  // as the daemons reported them
};

ControlPlaneSimResult run_control_plane_sim(const ControlPlaneSimOptions& options);

// "t=20.000s daemon 3 left: evicted: ..." (tests print these when a check fails).
std::string describe(const ControlPlaneDecision& decision);

}  // namespace grove
