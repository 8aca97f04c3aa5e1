// The JobManager's side of PMIx_Spawn: a job started by a rank of a running
// job, with that job's environment, its output sent to that job's CLI, its
// failure that job's, and its spawner answered once it runs.
#include "jobs/job_manager.h"
#include "jobs/job_manager_job.h"

namespace grove {

Result<std::string> JobManager::spawn(const JobRequest& request, const std::string& parent_nspace,
                                      std::uint32_t parent_rank,
                                      std::function<void(Status)> launched) {
  Job* parent = nullptr;
  for (auto& [id, job] : jobs_) {
    if (job->spec.nspace == parent_nspace) parent = job.get();
  }
  if (parent == nullptr) return Error{"the spawning job " + parent_nspace + " is not running"};
  if (parent->failed) return Error{"the spawning job " + parent_nspace + " is ending"};
  auto map = map_ranks(request.np(), hooks_.living_daemons(), request.policy);
  if (!map) return map.error();
  // The spawning job's environment and directory, unless the spawn says.
  JobRequest inherited = request;
  inherited.env = parent->spec.env;
  inherited.env_replaces = parent->spec.env_replaces;
  inherited.env.insert(inherited.env.end(), request.env.begin(), request.env.end());
  for (JobApp& app : inherited.apps) {
    if (app.cwd.empty()) app.cwd = parent->spec.apps.front().cwd;
  }
  const std::uint32_t child = next_job_;  // the id launch gives it
  Job& job = launch(inherited, *map, spawned_events(parent->id, child), parent, parent_rank);
  job.launched = std::move(launched);
  return job.spec.nspace;
}

JobEventFn JobManager::spawned_events(std::uint32_t parent, std::uint32_t child) {
  return
      [this, parent, child](const nlohmann::json& event, bool final) -> std::optional<std::size_t> {
        if (final) {
          child_ended(parent, child, event);
          return std::nullopt;
        }
        auto found = jobs_.find(parent);
        if (found == jobs_.end()) return std::nullopt;
        // Only output goes on, marked with the job it came from; the CLI knows
        // of spawned jobs by their output alone.
        if (event.is_null() || event.value("event", "") != "output") {
          return found->second->events(nullptr, false);
        }
        nlohmann::json marked = event;
        marked["job"] = child;
        return found->second->events(marked, false);
      };
}

void JobManager::child_ended(std::uint32_t parent, std::uint32_t child,
                             const nlohmann::json& final_event) {
  auto found = jobs_.find(parent);
  if (found == jobs_.end()) return;
  Job& job = *found->second;
  job.children.erase(child);
  const int status = final_event.value("status", 0);
  if (status != 0) {
    // As under mpirun: a spawned job that fails takes its parent down.
    fail(job, status,
         "spawned job " + std::to_string(child) + " failed: " +
             final_event.value("message", std::string("status ") + std::to_string(status)));
  }
  maybe_finish(parent);
}

std::optional<std::pair<std::string, std::uint32_t>> JobManager::spawned_by(
    const std::string& nspace) const {
  for (const auto& [id, job] : jobs_) {
    if (job->spec.nspace == nspace && !job->spec.parent_nspace.empty())
      return std::make_pair(job->spec.parent_nspace, job->spec.parent_rank);
  }
  return std::nullopt;
}

}  // namespace grove
