#include "pmix/dynamic_requests.h"

namespace grove::pmix_internal {

SpawnMessage DynamicRequests::take(SpawnUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  spawns_[handle] = PendingSpawn{upcall.cbfunc, upcall.cbdata, upcall.message.nspace};
  SpawnMessage message = std::move(upcall.message);
  message.handle = handle;
  return message;
}

Status DynamicRequests::complete(const SpawnReply& reply) {
  auto found = spawns_.find(reply.handle);
  if (found == spawns_.end()) {
    return Error{"no pending spawn has handle " + std::to_string(reply.handle)};
  }
  PendingSpawn request = found->second;
  spawns_.erase(found);
  if (request.cbfunc == nullptr) return ok_status();
  pmix_nspace_t nspace{};
  if (!reply.ok || reply.nspace.empty() || reply.nspace.size() > PMIX_MAX_NSLEN) {
    request.cbfunc(PMIX_ERR_JOB_FAILED_TO_LAUNCH, nspace, request.cbdata);
    return ok_status();
  }
  PMIX_LOAD_NSPACE(nspace, reply.nspace.c_str());
  request.cbfunc(PMIX_SUCCESS, nspace, request.cbdata);
  return ok_status();
}

void DynamicRequests::forget(const std::string& nspace) {
  std::vector<std::uint64_t> spawns;
  for (const auto& [handle, spawn] : spawns_)
    if (spawn.nspace == nspace) spawns.push_back(handle);
  for (std::uint64_t handle : spawns)
    (void)complete(SpawnReply{handle, false, "", "the spawning job ended"});
}

}  // namespace grove::pmix_internal
