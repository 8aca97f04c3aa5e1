#include "daemon/control_plane/launch_supervisor.h"

namespace grove {

start::Outbox LaunchSupervisor::begin() {
  return {start::ArmReportDeadline{report_timeout_ms_}};
}

start::Outbox LaunchSupervisor::launch_failed(const std::string& who, const std::string& reason) {
  switch (phase_) {
    case Phase::stopping:
      // Our own stop ends the sessions still launching; not a failed start.
      return {start::Notice{start::Notice::Level::verbose,
                            "launch of " + who + " ended by the stop: " + reason}};
    case Phase::starting:
      return fail_soon("cannot start " + who + ": " + reason, 0, false);
    case Phase::ready:
      return {start::Notice{start::Notice::Level::error, "cannot start " + who + ": " + reason}};
    case Phase::failed:
      return {};
  }
  return {};
}

start::Outbox LaunchSupervisor::daemon_lost(const std::string& message, bool step_running) {
  if (phase_ != Phase::starting) return {};
  return step_running ? fail_soon(message, srun_grace_ms_, /*provisional=*/true)
                      : fail_soon(message, 0, false);
}

start::Outbox LaunchSupervisor::step_ended(const std::string& how, const std::string& last_lines,
                                           const std::string& missing) {
  const std::string tail = last_lines.empty() ? "" : "; its last lines:" + last_lines;
  switch (phase_) {
    case Phase::stopping:
      return {
          start::Notice{start::Notice::Level::verbose, "the daemons' Slurm step ended: " + how}};
    case Phase::starting:
      return fail_soon(how + " before " +
                           (missing.empty() ? std::string("the DVM was ready")
                                            : "these daemons were up: " + missing) +
                           tail,
                       0, false);
    case Phase::ready:
      // Slurm ended the step and its daemons with it: the allocation is being
      // taken back (job ended, revoked, or cancelled), so the DVM goes too,
      // as prte does; it does not linger on the submitting host.
      return {start::Notice{start::Notice::Level::error,
                            "the daemons' Slurm step ended (" + how + "); stopping the DVM" + tail},
              start::StopDvm{"the daemons' Slurm step ended"}};
    case Phase::failed:
      return {};
  }
  return {};
}

start::Outbox LaunchSupervisor::report_deadline_passed(const std::string& missing) {
  if (phase_ != Phase::starting) return {};
  return fail_now("daemons never reported within daemon_report_timeout_ms (" +
                  std::to_string(report_timeout_ms_) + " ms): " + missing);
}

start::Outbox LaunchSupervisor::failure_timer_fired() {
  if (!failure_pending_ || phase_ == Phase::failed) return {};
  return fail_now(failure_);
}

start::Outbox LaunchSupervisor::fail_soon(const std::string& message, std::int64_t delay_ms,
                                          bool provisional) {
  // Never at once: the caller is a launcher's or the transport's callback,
  // and failing the start destroys both.
  if (failure_pending_ && (!provisional_ || provisional)) return {};
  failure_pending_ = true;
  provisional_ = provisional;
  failure_ = message;
  return {start::ArmFailure{delay_ms}};
}

start::Outbox LaunchSupervisor::fail_now(const std::string& message) {
  if (phase_ == Phase::failed) return {};
  phase_ = Phase::failed;
  failure_pending_ = false;
  return {start::FailStart{message}};
}

}  // namespace grove
