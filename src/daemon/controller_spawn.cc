// PMIx_Spawn at the controller: a rank's daemon forwards the request, the
// JobManager maps and launches the new job, and the daemon hears its nspace
// (or why it did not start), which libpmix hands to the spawning rank.
#include "daemon/controller.h"
#include "pmix/spawn_messages.h"

namespace grove {

namespace {

Result<JobRequest> spawn_request(const SpawnMessage& message) {
  if (message.apps.empty()) return Error{"a spawn with no program"};
  if (message.apps.size() > 1) {
    // One job runs one program in grove (MPI_Comm_spawn_multiple needs a
    // job of several apps).
    return Error{"a spawn of " + std::to_string(message.apps.size()) +
                 " programs at once is not supported"};
  }
  const SpawnApp& app = message.apps.front();
  JobRequest request;
  request.argv = app.argv;
  request.env = app.env;
  request.cwd = app.cwd;
  request.np = app.np;
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
  Result<JobRequest> request = spawn_request(*message);
  Result<std::string> nspace = request
                                   ? job_manager_->spawn(*request, message->nspace, message->rank)
                                   : Result<std::string>(request.error());
  if (nspace) {
    reply.ok = true;
    reply.nspace = *nspace;
  } else {
    reply.error = nspace.error().message;
    log_.error("rank %u of %s asked to spawn %s: %s", message->rank, message->nspace.c_str(),
               message->apps.empty() || message->apps.front().argv.empty()
                   ? "nothing"
                   : message->apps.front().argv.front().c_str(),
               reply.error.c_str());
  }
  if (runtime_) runtime_->send_control(from, pmix_tags::spawn_reply, encode(reply));
}

}  // namespace grove
