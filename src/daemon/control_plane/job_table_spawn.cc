// The job table's side of PMIx_Spawn: a job started by a rank of a running
// job, with that job's environment, its output sent to that job's CLI, its
// failure that job's, and its spawner answered once it runs.
#include "daemon/control_plane/job_table.h"
#include "daemon/control_plane/job_table_job.h"

namespace grove {

using namespace job_table;

Outbox JobTable::spawn(const JobRequest& request, const std::string& parent_nspace,
                       std::uint32_t parent_rank, Requester requester,
                       const std::vector<MapDaemon>& living, std::int64_t now_s) {
  Job* parent = find_nspace(parent_nspace);
  auto refuse = [&](const std::string& why) {
    return Outbox{AnswerSpawn{requester, "", Error{why}}};
  };
  if (parent == nullptr) return refuse("the spawning job " + parent_nspace + " is not running");
  if (parent->end.failed) return refuse("the spawning job " + parent_nspace + " is ending");
  auto map = map_ranks(request.np(), living, request.policy);
  if (!map) return refuse(map.error().message);
  // The spawning job's environment and directory, unless the spawn says.
  JobRequest inherited = request;
  inherited.env = parent->spec.env;
  inherited.env_replaces = parent->spec.env_replaces;
  inherited.mpi = parent->spec.mpi;  // MPICH's children speak PMI as their parent
  inherited.env.insert(inherited.env.end(), request.env.begin(), request.env.end());
  for (JobApp& app : inherited.apps) {
    if (app.cwd.empty()) app.cwd = parent->spec.apps.front().cwd;
  }
  Outbox out;
  Job& job = launch(Launch{inherited, *map, living, std::nullopt, parent, parent_rank, now_s}, out);
  job.spawn_answer = requester;
  return out;
}

void JobTable::child_ended(std::uint32_t parent_id, std::uint32_t child, int status,
                           const std::string& message, std::int64_t now_s, Outbox& out) {
  Job* parent = find(parent_id);
  if (parent == nullptr) return;
  parent->children.erase(child);
  if (status != 0) {
    // As under mpirun: a spawned job that fails takes its parent down.
    fail(*parent, status,
         "spawned job " + std::to_string(child) +
             " failed: " + (message.empty() ? "status " + std::to_string(status) : message),
         out);
  }
  maybe_finish(parent_id, now_s, out);
}

std::optional<Requester> JobTable::cli_of(const Job& job) const {
  const Job* at = &job;
  while (!at->cli && at->parent) {
    auto found = jobs_.find(*at->parent);
    if (found == jobs_.end()) return std::nullopt;
    at = found->second.get();
  }
  return at->cli;
}

SpawnedBy JobTable::spawned_by(const std::string& nspace) const {
  for (const auto& [id, job] : jobs_) {
    if (job->spec.nspace == nspace && !job->spec.parent_nspace.empty())
      return std::make_pair(job->spec.parent_nspace, job->spec.parent_rank);
  }
  return std::nullopt;
}

}  // namespace grove
