// PMIx_Spawn at the controller: a rank's daemon forwards the request, the
// JobManager maps and launches the new job, and the daemon hears its nspace
// (or why it did not start), which libpmix hands to the spawning rank.
#include "daemon/controller.h"
#include "pmix/spawn_messages.h"

namespace grove {

namespace {

Result<JobRequest> spawn_request(const SpawnMessage& message) {
  if (message.apps.empty()) return Error{"a spawn with no program"};
  JobRequest request;
  std::uint64_t ranks = 0;
  // Several apps (MPI_Comm_spawn_multiple) make one job: one nspace, one
  // MPI_COMM_WORLD, the apps' ranks one after the other.
  for (std::size_t index = 0; index < message.apps.size(); ++index) {
    const SpawnApp& app = message.apps[index];
    const std::string which = "app " + std::to_string(index) + " of the spawn";
    if (app.argv.empty() || app.argv.front().empty()) return Error{which + " names no program"};
    if (app.np == 0) return Error{which + " asks for no processes"};
    request.apps.push_back(JobApp{app.argv, app.env, app.cwd, app.np});
    ranks += app.np;
  }
  if (ranks > kMaxRanksPerJob) {
    return Error{"the spawn asks for " + std::to_string(ranks) + " processes; at most " +
                 std::to_string(kMaxRanksPerJob) + " per job"};
  }
  if (!message.map_by.empty()) {
    Result<MapSpec> policy = parse_map_policy(message.map_by);
    if (!policy) return Error{"PMIX_MAPBY: " + policy.error().message};
    request.policy = *policy;
  }
  return request;
}

}  // namespace

void Controller::on_spawn(Vpid from, const Bytes& payload) {
  auto message = wire_decode<SpawnMessage>(payload);
  if (!message) {
    log_.error("a malformed spawn request from daemon %u: %s", from,
               message.error().message.c_str());
    return;
  }
  SpawnReply reply{message->handle, false, "", ""};
  auto describe = [&message] {
    return message->apps.empty() || message->apps.front().argv.empty()
               ? std::string("nothing")
               : message->apps.front().argv.front();
  };
  Result<JobRequest> request = spawn_request(*message);
  if (!request) {
    reply.error = request.error().message;
  } else {
    // The answer goes when the job runs (every rank started), carrying the
    // nspace it was given, or why it ended first.
    SpawnReply launched_reply{message->handle, true, job_manager_->next_nspace(), ""};
    auto answer = [this, from, launched_reply](const Status& launched) mutable {
      if (!launched) {
        launched_reply.ok = false;
        launched_reply.nspace.clear();
        launched_reply.error = launched.error().message;
      }
      if (runtime_) runtime_->send_control(from, pmix_tags::spawn_reply, encode(launched_reply));
    };
    auto nspace = job_manager_->spawn(*request, message->nspace, message->rank, answer);
    if (nspace) return;
    reply.error = nspace.error().message;
  }
  log_.error("rank %u of %s asked to spawn %s: %s", message->rank, message->nspace.c_str(),
             describe().c_str(), reply.error.c_str());
  if (runtime_) runtime_->send_control(from, pmix_tags::spawn_reply, encode(reply));
}

}  // namespace grove
