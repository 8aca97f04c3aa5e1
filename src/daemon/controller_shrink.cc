// grove shrink at the controller: the named daemons take no new ranks
// (draining), the jobs with ranks on them end first (only with --force;
// without it the shrink is refused, naming them), then each leaves cleanly:
// a departure every daemon takes in step, its vpid a hole in the trees.
#include <signal.h>

#include "daemon/controller.h"

namespace grove {

namespace {
constexpr const char* kRemovedReason = "removed by grove shrink";
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
  Jobs::Drain drain{*targets, {}, std::move(reply)};
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
  reply({{"ok", true}, {"removed", removed}, {"lost", lost}, {"daemons", roster_->living()}});
}

}  // namespace grove
