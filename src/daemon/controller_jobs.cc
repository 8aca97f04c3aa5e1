// The controller drives its job table (daemon/control_plane/job_table.h):
// the daemons' job messages go in, its effects are carried out here: the
// broadcasts, the acknowledgements and input for a daemon (the controller's
// own rank host directly), the grove run replies its requester tokens stand
// for, PMIx_Spawn's answers, PMIx events and the job timers.
#include <ctime>

#include "daemon/controller.h"
#include "daemon/dvm_events.h"
#include "pmix/spawn_messages.h"

namespace grove {

namespace {
std::int64_t wall_now_s() {
  return static_cast<std::int64_t>(std::time(nullptr));
}
}  // namespace

void Controller::start_job_table() {
  jobs_.emplace(JobTable(
      JobTableConfig{"grove." + std::to_string(getpid()), params_.get_size("jobs_output_window")}));
  publish_ = std::make_unique<PublishService>(
      loop_->base(), log_, [this](std::uint32_t daemon, std::uint16_t tag, Bytes payload) {
        if (runtime_) runtime_->send_control(daemon, tag, std::move(payload));
      });
}

JobPlaces Controller::job_places() const {
  JobPlaces places;
  for (const auto& daemon : roster_->records()) {
    if (daemon.state != DaemonStateKind::up || !daemon.holds_ranks) continue;
    MapDaemon entry{daemon.vpid, daemon.slots.value_or(daemon.cores), daemon.hostname,
                    daemon.packages};
    entry.cores = daemon.cores;
    entry.max_ranks = max_ranks_for_open_files(daemon.open_files);
    places.living.push_back(entry);
  }
  places.controller_host = roster_->record(kControllerVpid).hostname;
  return places;
}

void Controller::on_job_message(Vpid from, std::uint16_t tag, const Bytes& payload) {
  JobTable& table = jobs_->table;
  switch (tag) {
    case job_tags::output:
      if (auto output = wire_decode<JobOutput>(payload)) apply(table.on_output(*output, from));
      return;
    case job_tags::exited:
      if (auto exit = wire_decode<RankExit>(payload)) apply(table.on_exit(*exit, wall_now_s()));
      return;
    case job_tags::ranks_started:
      if (auto started = wire_decode<RanksStarted>(payload)) apply(table.on_started(*started));
      return;
    case job_tags::stdin_ack:
      if (auto ack = wire_decode<StdinAck>(payload)) apply(table.on_stdin_ack(from, *ack));
      return;
    case job_tags::aborted:
      if (auto abort = wire_decode<JobAbort>(payload)) apply(table.on_abort(*abort));
      return;
  }
}

void Controller::submit_run(const RunRequest& run, ReplyFn reply, PartialFn partial) {
  const std::uint64_t requester = hold_reply(std::move(reply));
  jobs_->partials.emplace(requester, std::move(partial));
  jobs_->table.set_epoch(runtime_->engine().membership().epoch());
  apply(jobs_->table.submit(run, requester, job_places(), wall_now_s()));
}

void Controller::spawn_job(const JobRequest& request, const SpawnMessage& message, Vpid from) {
  const Requester requester = jobs_->next_spawn++;
  jobs_->spawns.emplace(requester, SpawnAsker{from, message.handle, message.rank, message.nspace,
                                              message.apps.front().argv.front()});
  jobs_->table.set_epoch(runtime_->engine().membership().epoch());
  apply(jobs_->table.spawn(request, message.nspace, message.rank, requester, job_places().living,
                           wall_now_s()));
}

void Controller::answer_spawn(const job_table::AnswerSpawn& answer) {
  auto found = jobs_->spawns.find(answer.requester);
  if (found == jobs_->spawns.end()) return;
  const SpawnAsker asker = found->second;
  jobs_->spawns.erase(found);
  SpawnReply reply{asker.handle, answer.launched.ok(), "", ""};
  if (answer.launched) {
    reply.nspace = answer.nspace;
  } else {
    reply.error = answer.launched.error().message;
    // Refused before it was launched: the rank hears why, and so does the log.
    if (answer.nspace.empty()) {
      log_.error("rank %u of %s asked to spawn %s: %s", asker.rank, asker.nspace.c_str(),
                 asker.program.c_str(), reply.error.c_str());
    }
  }
  if (runtime_) runtime_->send_control(asker.from, pmix_tags::spawn_reply, encode(reply));
}

void Controller::arm_job_timer(const job_table::ArmTimer& arm) {
  const JobTimerKey key{arm.job, arm.kind};
  auto found = jobs_->timers.find(key);
  if (found == jobs_->timers.end()) {
    Timer timer(loop_->base(), [this, key] {
      // Out of the table first: what it fires may arm a fresh one under the
      // same key, and this one goes once the firing is carried out.
      auto node = jobs_->timers.extract(key);
      apply(jobs_->table.timer_fired(key.first, key.second));
    });
    found = jobs_->timers.emplace(key, std::move(timer)).first;
  }
  found->second.arm(arm.ms);
}

void Controller::send_to_rank_host(const job_table::Effect& effect) {
  if (const auto* ack = std::get_if<job_table::AckOutput>(&effect)) {
    if (ack->daemon != kControllerVpid) {
      if (runtime_) runtime_->send_control(ack->daemon, job_tags::output_ack, encode(ack->ack));
    } else if (rank_host_) {
      rank_host_->on_output_ack(ack->ack);
    }
    return;
  }
  const auto& input = std::get<job_table::SendStdin>(effect);
  if (input.daemon != kControllerVpid) {
    if (runtime_) runtime_->send_control(input.daemon, job_tags::stdin_data, encode(input.input));
  } else if (rank_host_) {
    // The answer may come as the rank host ends, after the job table.
    rank_host_->on_stdin(input.input, [this](const StdinAck& ack) {
      if (jobs_) apply(jobs_->table.on_stdin_ack(kControllerVpid, ack));
    });
  }
}

void Controller::apply(job_table::Outbox out) {
  for (job_table::Effect& effect : out) {
    std::visit(
        [&](auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, job_table::Broadcast>) {
            if (runtime_) runtime_->broadcast(e.tag, std::move(e.payload));
          } else if constexpr (std::is_same_v<T, job_table::AckOutput> ||
                               std::is_same_v<T, job_table::SendStdin>) {
            send_to_rank_host(effect);
          } else if constexpr (std::is_same_v<T, job_table::CliEvent>) {
            if (e.final) {
              jobs_->partials.erase(e.requester);
              take_reply(e.requester)(e.event);
            } else if (auto partial = jobs_->partials.find(e.requester);
                       partial != jobs_->partials.end()) {
              partial->second(e.event);
            }
          } else if constexpr (std::is_same_v<T, job_table::CheckCliQueue>) {
            auto partial = jobs_->partials.find(e.requester);
            std::optional<std::size_t> queued;
            if (partial != jobs_->partials.end()) queued = partial->second(nullptr);
            apply(jobs_->table.cli_queue(e.job, queued));
          } else if constexpr (std::is_same_v<T, job_table::RankExited>) {
            publish_->rank_exited(e.nspace, e.rank);
          } else if constexpr (std::is_same_v<T, job_table::RankFailed>) {
            // A job's events go to its ranks and its spawner only (dvm_events.h).
            if (runtime_) {
              runtime_->broadcast(pmix_tags::event,
                                  encode(rank_failed_event(e.nspace, e.rank, e.how, e.status,
                                                           e.message, e.spawned_by)));
            }
          } else if constexpr (std::is_same_v<T, job_table::JobEnded>) {
            publish_->job_ended(e.nspace);
            if (runtime_) {
              runtime_->broadcast(pmix_tags::event, encode(job_end_event(e.nspace, e.status,
                                                                         e.message, e.spawned_by)));
            }
            settle_drains();
          } else if constexpr (std::is_same_v<T, job_table::AnswerSpawn>) {
            answer_spawn(e);
          } else if constexpr (std::is_same_v<T, job_table::AnswerStdin>) {
            take_reply(e.requester)({{"ok", true}, {"open", e.open}});
          } else if constexpr (std::is_same_v<T, job_table::ArmTimer>) {
            arm_job_timer(e);
          } else if constexpr (std::is_same_v<T, job_table::CancelTimer>) {
            jobs_->timers.erase(JobTimerKey{e.job, e.kind});
          } else {
            static_assert(std::is_same_v<T, job_table::Notice>, "an effect without a driver");
            if (e.level == job_table::Notice::Level::jobs) {
              log_.notice("jobs", "%s", e.text.c_str());
            } else {
              log_.verbose("daemon", 1, "%s", e.text.c_str());
            }
          }
        },
        effect);
  }
}

}  // namespace grove
