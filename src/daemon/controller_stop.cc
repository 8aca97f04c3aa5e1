// The controller carrying out its stop sequence (control_plane/stop_sequence.h):
// the decisions are the state machine's; the loop handles, the processes and
// the replies are here.
#include <signal.h>
#include <sys/wait.h>

#include "daemon/controller.h"

namespace grove {

void Controller::begin_stop(ReplyFn reply, const std::string& reason) {
  // The stop is over (the loop ends within moments): nothing would answer
  // a request held now.
  if (stopping_.answer) {
    if (reply) reply(*stopping_.answer);
    return;
  }
  if (reply) stopping_.replies.push_back(reply);
  apply(stopping_.sequence.begin(reason, launch_.supervisor.is_ready()));
}

void Controller::apply(stop::Outbox out) {
  for (stop::Effect& effect : out) {
    std::visit(
        [this](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, stop::EndWork>) {
            end_work(e.reason);
          } else if constexpr (std::is_same_v<T, stop::BroadcastShutdown>) {
            stopping_.shutdown_op = runtime_->broadcast(daemon_tags::shutdown, {});
          } else if constexpr (std::is_same_v<T, stop::ArmTimer>) {
            arm_stop_timer(e.timer, e.delay_ms);
          } else if constexpr (std::is_same_v<T, stop::CloseConnections>) {
            runtime_.reset();       // every connection closes: each daemon leaves when it sees that
            jobs_->timers.clear();  // nothing of the jobs goes out any more
          } else if constexpr (std::is_same_v<T, stop::KillStragglers>) {
            kill_stragglers();
          } else if constexpr (std::is_same_v<T, stop::Reap>) {
            apply(stopping_.sequence.reaped(reap_after_close()));
          } else if constexpr (std::is_same_v<T, stop::Complete>) {
            complete_stop();
          } else {
            static_assert(std::is_same_v<T, stop::Notice>, "a stop effect without a driver");
            log_.error("%s", e.text.c_str());
          }
        },
        effect);
  }
}

void Controller::end_work(const std::string& reason) {
  launch_.supervisor.stopping();
  roster_->mark_stopping();
  log_.verbose("daemon", 1, "stopping the DVM: %s", reason.c_str());
  heartbeat_timer_ = Timer();
  launch_.report_deadline = Timer();
  apply(cli_.service.stopping());
  for (auto& drain : std::exchange(jobs_->drains, {}))
    drain.reply(error_reply("the DVM is stopping"));
  for (auto& leaving : std::exchange(jobs_->leaving, {}))
    leaving.reply(leaving.answer);  // they left; the rest stops anyway
  if (launch_.growth) {
    launch_.growth->reply(error_reply("the DVM is stopping"));
    launch_.growth.reset();
    launch_.grow_deadline.cancel();
  }
  // Cancelled, not destroyed: this may run inside one of their callbacks.
  for (auto& [vpid, respawn] : launch_.respawns) {
    respawn.timer.cancel();
    respawn.deadline.cancel();
  }
  apply(jobs_->table.end_all("the DVM is stopping"));
}

void Controller::arm_stop_timer(StopTimer timer, std::int64_t delay_ms) {
  Timer& armed = stopping_.timers[static_cast<std::size_t>(timer)];
  if (!armed)
    armed = Timer(loop_->base(), [this, timer] { apply(stopping_.sequence.timer_fired(timer)); });
  armed.arm(delay_ms);
}

void Controller::kill_stragglers() {
  for (const auto& [vpid, pid] : roster_->unreaped_children()) {
    log_.error("daemon %u (pid %d) did not exit; killing it", vpid, pid);
    kill(pid, SIGKILL);
  }
  if (remote_.running() > 0) {
    log_.error("%zu ssh sessions to daemons did not end; killing them", remote_.running());
    remote_.signal_all(SIGKILL);
  }
}

bool Controller::reap_after_close() {
  // Ranks hosted here die with the JobHost.
  if (rank_host_) rank_host_->end_ranks();
  for (const auto& [vpid, pid] : roster_->unreaped_children()) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) roster_->reaped(vpid);
  }
  remote_.reap();
  return (remote_.running() > 0) || !roster_->unreaped_children().empty();
}

void Controller::complete_stop() {
  for (Timer& timer : stopping_.timers)
    timer = Timer();
  auto removed = remove_dvm_directory(identity_.dvm);
  // The controller and every daemon still in the DVM; lost ones apart, and
  // removed ones (grove shrink) not counted at all.
  const std::size_t lost = roster_->count(DaemonStateKind::failed);
  const std::size_t stopped =
      roster_->records().size() - lost - roster_->count(DaemonStateKind::removed);
  nlohmann::json out{{"ok", removed.ok()},
                     {"stopped", stopped},
                     {"lost", lost},
                     {"reason", stopping_.sequence.reason()}};
  if (!removed) out["error"] = removed.error().message;
  stopping_.answer = out;
  for (const ReplyFn& reply : stopping_.replies)
    reply(out);
  stopping_.replies.clear();
  log_.verbose("daemon", 1, "DVM stopped (%s)", stopping_.sequence.reason().c_str());
  // A one-shot grove run waits for this process to end: lingering a fixed
  // 100 ms for the answers to go out cost each such job 100 ms.
  stopping_.exit_when_answered = Timer(loop_->base(), [this] {
    const bool answered = !control_ || control_->clients() == 0;
    if (answered || ++stopping_.exit_checks >= 100) {
      loop_->exit(0);
      return;
    }
    stopping_.exit_when_answered.arm(1);
  });
  stopping_.exit_when_answered.arm(0);
}

}  // namespace grove
