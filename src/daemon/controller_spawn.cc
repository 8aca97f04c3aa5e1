// PMIx_Spawn at the controller: a rank's daemon forwards the request, the
// job table maps and launches the new job, and the daemon hears its nspace
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
  for (const std::string& pair : message.pmi_preput) {
    if (pair.find('=') == std::string::npos || pair.front() == '=')
      return Error{"a spawn's preput '" + pair.substr(0, 64) + "' is not KEY=VALUE"};
  }
  request.pmi_preput = message.pmi_preput;
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
  Result<JobRequest> request = spawn_request(*message);
  if (request) {
    // The answer goes when the job runs (every rank started), carrying the
    // nspace it was given, or why it ended first (controller_jobs.cc).
    spawn_job(*request, *message, from);
    return;
  }
  const std::string program = message->apps.empty() || message->apps.front().argv.empty()
                                  ? std::string("nothing")
                                  : message->apps.front().argv.front();
  log_.error("rank %u of %s asked to spawn %s: %s", message->rank, message->nspace.c_str(),
             program.c_str(), request.error().message.c_str());
  SpawnReply reply{message->handle, false, "", request.error().message};
  if (runtime_) runtime_->send_control(from, pmix_tags::spawn_reply, encode(reply));
}

}  // namespace grove
