#include "pmix/spawn_requests.h"

#include <cstring>

namespace grove::pmix_internal {

SpawnMessage SpawnRequests::take(SpawnUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  pending_[handle] = Pending{upcall.cbfunc, upcall.cbdata, upcall.message.nspace};
  SpawnMessage message = std::move(upcall.message);
  message.handle = handle;
  return message;
}

Status SpawnRequests::complete(const SpawnReply& reply) {
  auto found = pending_.find(reply.handle);
  if (found == pending_.end()) {
    return Error{"no pending spawn has handle " + std::to_string(reply.handle)};
  }
  Pending request = found->second;
  pending_.erase(found);
  if (request.cbfunc == nullptr) return ok_status();
  if (!reply.ok || reply.nspace.empty() || reply.nspace.size() > PMIX_MAX_NSLEN) {
    pmix_nspace_t none{};
    request.cbfunc(PMIX_ERR_JOB_FAILED_TO_LAUNCH, none, request.cbdata);
    return ok_status();
  }
  pmix_nspace_t nspace;
  PMIX_LOAD_NSPACE(nspace, reply.nspace.c_str());
  request.cbfunc(PMIX_SUCCESS, nspace, request.cbdata);
  return ok_status();
}

void SpawnRequests::forget(const std::string& nspace) {
  std::erase_if(pending_, [&](const auto& entry) { return entry.second.nspace == nspace; });
}

}  // namespace grove::pmix_internal
