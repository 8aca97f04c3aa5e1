// dvm_respawn_lost: the controller starts a lost daemon again on its host,
// at its old vpid, as grove grow --host would: revived in the roster, started
// with --join (forked here, over ssh, or in an srun step of its own), and
// admitted when it reports (a return in the engine). Each
// vpid is respawned at most dvm_respawn_max times, the first after
// dvm_respawn_delay_ms and each later one after twice the wait before it (at
// most a minute): a daemon that dies at once every time does not make the
// controller spin, and a host that is gone for good costs a few launches.
#include <algorithm>

#include "daemon/controller.h"

namespace grove {

namespace {
constexpr std::int64_t kMaxRespawnDelayMs = 60'000;
constexpr std::int64_t kRespawnReportMs = 30'000;  // as for grove grow
constexpr std::int64_t kGoneRecheckMs = 200;
}  // namespace

std::int64_t Controller::eviction_wait_ms(Vpid vpid) const {
  auto evicted = launch_.evicted_ns.find(vpid);
  const std::int64_t timeout_ms = params_.get_int("daemon_controller_timeout_ms");
  const std::int64_t heartbeat_ms = params_.get_int("daemon_heartbeat_ms");
  // Without a controller timeout (or heartbeats) it never leaves by itself:
  // the user's choice, not waited for.
  if (evicted == launch_.evicted_ns.end() || timeout_ms == 0 || heartbeat_ms == 0) return 0;
  const TimeNs gone_ns =
      evicted->second + static_cast<TimeNs>(timeout_ms + heartbeat_ms) * 1'000'000ULL;
  const TimeNs now = runtime_->now();
  return gone_ns > now ? static_cast<std::int64_t>((gone_ns - now) / 1'000'000ULL) + 1 : 0;
}

Status Controller::may_return(Vpid vpid) const {
  if (const std::int64_t wait = eviction_wait_ms(vpid); wait > 0) {
    return Error{roster_->describe(vpid) +
                 " was declared lost while it may still run (silent, or cut off); it leaves by "
                 "itself once the controller has been silent for daemon_controller_timeout_ms: "
                 "try again in " +
                 std::to_string((wait + 999) / 1000) + " s"};
  }
  if (!roster_->gone(vpid)) {
    return Error{roster_->describe(vpid) +
                 " is still leaving the DVM (its connection is open): try again in a moment"};
  }
  return ok_status();
}

void Controller::consider_respawn(Vpid vpid) {
  // One that never reported (a grow whose launch failed) was never in the
  // DVM: nothing to bring back.
  if (!params_.get_bool("dvm_respawn_lost") || stopping_.sequence.stopping() ||
      launch_.supervisor.phase() != LaunchSupervisor::Phase::ready || !roster_->ever_up(vpid)) {
    return;
  }
  Respawn& respawn = launch_.respawns[vpid];
  // Made once per vpid, then only armed and cancelled: this may run inside
  // either timer's own callback (a respawn lost at once, or late).
  if (!respawn.timer) {
    respawn.timer = Timer(loop_->base(), [this, vpid] { this->respawn(vpid); });
    respawn.deadline = Timer(loop_->base(), [this, vpid] {
      if (!stopping_.sequence.stopping() &&
          roster_->record(vpid).state == DaemonStateKind::launching)
        daemon_lost(vpid, "did not report within 30 s of its respawn", /*may_still_run=*/true);
    });
  }
  respawn.deadline.cancel();
  const auto max = static_cast<std::uint32_t>(params_.get_int("dvm_respawn_max"));
  if (respawn.count >= max) {
    log_.error("%s was respawned %u times (dvm_respawn_max): it stays lost",
               roster_->describe(vpid).c_str(), respawn.count);
    return;
  }
  std::int64_t delay = params_.get_int("dvm_respawn_delay_ms");
  for (std::uint32_t i = 0; i < respawn.count && delay < kMaxRespawnDelayMs; ++i)
    delay *= 2;
  delay = std::min(delay, kMaxRespawnDelayMs);
  // Never beside its predecessor: one told to leave may still run.
  delay = std::max(delay, eviction_wait_ms(vpid));
  log_.notice("daemon", "dvm_respawn_lost: starting %s again in %lld ms (respawn %u of %u)",
              roster_->describe(vpid).c_str(), static_cast<long long>(delay), respawn.count + 1,
              max);
  respawn.timer.arm(delay);
}

void Controller::respawn(Vpid vpid) {
  // Since armed: the DVM may be stopping, or grove grow --host brought it back.
  if (stopping_.sequence.stopping() || roster_->record(vpid).state != DaemonStateKind::failed)
    return;
  Respawn& respawn = launch_.respawns[vpid];
  if (!may_return(vpid)) {
    // Its process or connection is still ending: never beside it. Soon.
    respawn.timer.arm(kGoneRecheckMs);
    return;
  }
  ++respawn.count;
  roster_->revive(vpid);
  if (options_.plan && options_.launcher == RemoteLauncherKind::slurm) {
    start_srun_step({vpid});
  } else if (options_.plan) {
    start_joiners_over_ssh({vpid});
  } else {
    start_local_joiner(vpid);
  }
  if (roster_->record(vpid).state == DaemonStateKind::launching)
    respawn.deadline.arm(kRespawnReportMs);  // else lost at once, and considered again
}

}  // namespace grove
