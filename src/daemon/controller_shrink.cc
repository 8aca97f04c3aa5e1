// grove shrink at the controller: the named daemons take no new ranks
// (draining), the jobs with ranks on them end first (only with --force;
// without it the shrink is refused, naming them), then each leaves cleanly:
// a departure every daemon takes in step, its vpid a hole in the trees.
#include <signal.h>

#include <algorithm>
#include <ctime>

#include "daemon/controller.h"

namespace grove {

namespace {
constexpr const char* kRemovedReason = "removed by grove shrink";
// How long the jobs a forced shrink ends may take: they get SIGTERM, then
// SIGKILL after 2 s; past this the daemons leave anyway and their ranks
// are counted as ended with them (a rank that even SIGKILL does not end, a
// daemon that hangs while its heartbeats still come).
constexpr std::int64_t kDrainDeadlineMs = 10'000;
// How long a shrink's answer waits for the daemons to close their connections.
constexpr std::int64_t kLeaveWaitMs = 5'000;
}  // namespace

void Controller::request_shrink(const ShrinkRequest& request, ReplyFn reply) {
  auto targets = roster_->shrink_targets(request.hosts, request.daemons);
  if (!targets) {
    reply(error_reply(targets.error().message));
    return;
  }
  const std::set<Vpid> leaving(targets->begin(), targets->end());
  const std::map<std::uint32_t, std::string> jobs = jobs_->table.jobs_on(leaving);
  std::string named;
  for (const auto& [id, job] : jobs)
    named += (named.empty() ? "" : ", ") + job;
  std::string daemons;
  for (Vpid vpid : *targets)
    daemons += (daemons.empty() ? "" : ", ") + roster_->describe(vpid);
  if (!jobs.empty() && !request.force) {
    reply(error_reply(daemons + (targets->size() == 1 ? " hosts" : " host") + " ranks of " + named +
                      ": give --force to end " + (jobs.size() == 1 ? "it" : "them") + " first"));
    return;
  }
  for (Vpid vpid : *targets)
    roster_->drain(vpid);
  log_.notice("jobs", "grove shrink: %s leaving the DVM%s%s", daemons.c_str(),
              jobs.empty() ? "" : "; ending ", named.c_str());
  Jobs::Drain drain{jobs_->next_drain++, *targets, {}, std::move(reply), {}};
  if (!jobs.empty()) {
    drain.deadline = Timer(loop_->base(), [this, id = drain.id] { drain_overdue(id); });
    drain.deadline.arm(kDrainDeadlineMs);
  }
  for (const auto& [id, job] : jobs) {
    drain.jobs.insert(id);
    // As grove kill reports it: the job was ended from outside.
    if (auto killed = jobs_->table.kill(
            id, 128 + SIGTERM, "killed: " + daemons + " left the DVM (grove shrink --force)"))
      apply(std::move(*killed));
  }
  jobs_->drains.push_back(std::move(drain));
  settle_drains();
}

void Controller::settle_drains() {
  std::vector<Jobs::Drain> done;
  auto& drains = jobs_->drains;
  for (auto drain = drains.begin(); drain != drains.end();) {
    std::erase_if(drain->jobs, [this](std::uint32_t job) { return !jobs_->table.runs(job); });
    if (!drain->jobs.empty()) {
      ++drain;
      continue;
    }
    done.push_back(std::move(*drain));
    drain = drains.erase(drain);
  }
  // Carried out after the list is settled: a removal's effects may end more jobs.
  for (const Jobs::Drain& drain : done)
    finish_drain(drain.daemons, drain.reply);
}

void Controller::drain_overdue(std::uint64_t id) {
  auto overdue = [this, id] { return std::ranges::find(jobs_->drains, id, &Jobs::Drain::id); };
  auto drain = overdue();
  if (drain == jobs_->drains.end()) return;
  const std::vector<Vpid> daemons = drain->daemons;
  log_.error(
      "grove shrink: the jobs on %zu leaving daemon(s) did not end in %lld s; they leave "
      "anyway",
      daemons.size(), static_cast<long long>(kDrainDeadlineMs / 1000));
  // Their ranks there end with them: the jobs no longer wait for those exits.
  for (Vpid vpid : daemons)
    apply(jobs_->table.on_daemon_lost(vpid, roster_->describe(vpid), std::time(nullptr)));
  drain = overdue();  // what the exits settled may have finished it
  if (drain == jobs_->drains.end()) return;
  drain->jobs.clear();
  // Settled from the loop: settling ends the drain, and with it the timer
  // whose callback this is.
  run_later(loop_->base(), 0, [this] { settle_drains(); });
}

void Controller::finish_drain(const std::vector<Vpid>& daemons, const ReplyFn& reply) {
  nlohmann::json removed = nlohmann::json::array();
  nlohmann::json lost = nlohmann::json::array();
  for (Vpid vpid : daemons) {
    apply(roster_->remove(vpid, kRemovedReason));
    const DaemonRecord& record = roster_->record(vpid);
    nlohmann::json entry{{"vpid", vpid}, {"host", record.hostname}};
    if (record.state == DaemonStateKind::removed) {
      removed.push_back(entry);
    } else {
      entry["failure"] = record.failure;  // lost while its jobs ended
      lost.push_back(entry);
    }
  }
  // A status gathering waits for one answer fewer.
  apply(cli_.service.daemon_lost(roster_->living()));
  nlohmann::json answer{
      {"ok", true}, {"removed", removed}, {"lost", lost}, {"daemons", roster_->living()}};
  const std::uint64_t id = jobs_->next_leaving++;
  jobs_->leaving.push_back({id, daemons, reply, std::move(answer)});
  // The loop runs no callback once the controller (and its loop) is gone.
  // The wait's end is the timer's, not a comparison of clocks: libevent's
  // cached time may fire it a little before runtime_->now() says so.
  run_later(loop_->base(), kLeaveWaitMs, [this, id] { settle_leaving(id); });
  settle_leaving();
}

void Controller::settle_leaving(std::uint64_t due) {
  std::vector<Jobs::Leaving> done;
  std::erase_if(jobs_->leaving, [&](Jobs::Leaving& leaving) {
    const bool left = std::ranges::all_of(leaving.daemons, [this](Vpid vpid) {
      const DaemonStateKind state = roster_->record(vpid).state;
      return state != DaemonStateKind::removed || roster_->gone(vpid);
    });
    if (!left && leaving.id != due) return false;
    done.push_back(std::move(leaving));
    return true;
  });
  for (Jobs::Leaving& leaving : done)
    leaving.reply(leaving.answer);
}

}  // namespace grove
