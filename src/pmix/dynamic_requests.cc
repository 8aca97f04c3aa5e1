#include "pmix/dynamic_requests.h"

#include <algorithm>

namespace grove::pmix_internal {

SpawnMessage DynamicRequests::take(SpawnUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  spawns_[handle] = PendingSpawn{upcall.cbfunc, upcall.cbdata, upcall.message.nspace};
  SpawnMessage message = std::move(upcall.message);
  message.handle = handle;
  return message;
}

PmixConnectCall DynamicRequests::take(ConnectUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  PendingConnect& pending = connects_[handle];
  pending.cbfunc = upcall.cbfunc;
  pending.cbdata = upcall.cbdata;
  for (const auto& [nspace, ranks] : upcall.call.procs)
    pending.nspaces.push_back(nspace);
  PmixConnectCall call = std::move(upcall.call);
  call.handle = handle;
  return call;
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

Status DynamicRequests::complete_connect(std::uint64_t handle, int status) {
  auto found = connects_.find(handle);
  if (found == connects_.end()) {
    return Error{"no pending connect or disconnect has handle " + std::to_string(handle)};
  }
  PendingConnect request = found->second;
  connects_.erase(found);
  if (request.cbfunc != nullptr) request.cbfunc(status, request.cbdata);
  return ok_status();
}

void DynamicRequests::forget(const std::string& nspace) {
  std::erase_if(spawns_, [&](const auto& entry) { return entry.second.nspace == nspace; });
  std::erase_if(connects_, [&](const auto& entry) {
    const auto& nspaces = entry.second.nspaces;
    return std::find(nspaces.begin(), nspaces.end(), nspace) != nspaces.end();
  });
}

}  // namespace grove::pmix_internal
