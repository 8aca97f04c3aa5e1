// How the DVM's start ends: ready once the endpoint table lands everywhere,
// or failed, once, with the first failure's message (a daemon that could
// not be started, one lost during the start, srun's step ending, or the
// report deadline passing). Under srun a daemon lost while the step still
// runs is most often Slurm cancelling the step for another node's failure,
// and srun's exit, which follows, names that node: such a failure is
// provisional, and waits a while for a firm one to replace it. Once ready,
// the end of srun's step stops the DVM. Sans-IO: the controller carries out
// the effects.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace grove {

namespace start {

// Arm the report deadline (daemon_report_timeout_ms).
struct ArmReportDeadline {
  std::int64_t delay_ms = 0;
};
// Arm (or re-arm) the failure's timer; when it fires, failure_timer_fired().
struct ArmFailure {
  std::int64_t delay_ms = 0;
};
// The start failed: end everything started, say why, leave.
struct FailStart {
  std::string message;
};
// The DVM runs, but srun's step (and its daemons) ended: stop it.
struct StopDvm {
  std::string reason;
};
struct Notice {
  enum class Level : std::uint8_t { error, verbose } level = Level::verbose;
  std::string text;
};

using Effect = std::variant<ArmReportDeadline, ArmFailure, FailStart, StopDvm, Notice>;
using Outbox = std::vector<Effect>;

}  // namespace start

class LaunchSupervisor {
 public:
  enum class Phase : std::uint8_t { starting, ready, failed, stopping };

  // srun_grace_ms: how long a provisional failure waits for srun's exit.
  LaunchSupervisor(std::int64_t report_timeout_ms, std::int64_t srun_grace_ms)
      : report_timeout_ms_(report_timeout_ms), srun_grace_ms_(srun_grace_ms) {}

  start::Outbox begin();
  // `who`: "daemon 3 (node3)".
  start::Outbox launch_failed(const std::string& who, const std::string& reason);
  // The roster lost a daemon during the start; `step_running`: under srun,
  // with the step still running.
  start::Outbox daemon_lost(const std::string& message, bool step_running);
  // srun's step ended; `missing`: the daemons not up yet, named.
  start::Outbox step_ended(const std::string& how, const std::string& last_lines,
                           const std::string& missing);
  start::Outbox report_deadline_passed(const std::string& missing);
  // The controller's own start failed (no daemon to blame).
  start::Outbox fail(const std::string& message) { return fail_now(message); }
  start::Outbox failure_timer_fired();
  // The endpoint table landed everywhere.
  void ready() {
    if (phase_ == Phase::starting) phase_ = Phase::ready;
  }
  void stopping() {
    if (phase_ != Phase::failed) phase_ = Phase::stopping;
  }
  Phase phase() const { return phase_; }
  bool is_ready() const { return phase_ == Phase::ready; }

 private:
  // The first failure is the one reported, unless it was provisional and a
  // firm one comes before its timer fires.
  start::Outbox fail_soon(const std::string& message, std::int64_t delay_ms, bool provisional);
  start::Outbox fail_now(const std::string& message);

  std::int64_t report_timeout_ms_;
  std::int64_t srun_grace_ms_;
  Phase phase_ = Phase::starting;
  bool failure_pending_ = false;
  bool provisional_ = false;
  std::string failure_;
};

}  // namespace grove
