#include "pmix/dynamic_requests.h"

#include <algorithm>

#include "pmix/info_list.h"

namespace grove::pmix_internal {

namespace {

// Whether any of `nspaces` is `nspace`.
bool names(const std::vector<std::string>& nspaces, const std::string& nspace) {
  return std::find(nspaces.begin(), nspaces.end(), nspace) != nspaces.end();
}

}  // namespace

SpawnMessage DynamicRequests::take(SpawnUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  spawns_[handle] = PendingSpawn{upcall.cbfunc, upcall.cbdata, upcall.message.nspace};
  SpawnMessage message = std::move(upcall.message);
  message.handle = handle;
  return message;
}

template <typename Pending, typename Upcall>
auto DynamicRequests::take_collective(std::map<std::uint64_t, Pending>& pending_calls,
                                      Upcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  Pending& pending = pending_calls[handle];
  pending.cbfunc = upcall.cbfunc;
  pending.cbdata = upcall.cbdata;
  for (const auto& [nspace, ranks] : upcall.call.procs)
    pending.nspaces.push_back(nspace);
  auto call = std::move(upcall.call);
  call.handle = handle;
  return call;
}

PmixConnectCall DynamicRequests::take(ConnectUpcall& upcall) {
  return take_collective(connects_, upcall);
}

PmixGroupCall DynamicRequests::take(GroupUpcall& upcall) {
  return take_collective(groups_, upcall);
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

Status DynamicRequests::complete_group(std::uint64_t handle, int status,
                                       std::optional<std::uint64_t> context_id) {
  auto found = groups_.find(handle);
  if (found == groups_.end()) {
    return Error{"no pending group operation has handle " + std::to_string(handle)};
  }
  PendingGroup request = found->second;
  groups_.erase(found);
  if (request.cbfunc == nullptr) return ok_status();
  InfoList list;
  if (status == PMIX_SUCCESS && context_id) {
    const std::size_t id = *context_id;  // PMIx's type for it is size_t
    list.add_size(PMIX_GROUP_CONTEXT_ID, id);
  }
  return answer_info(request.cbfunc, request.cbdata, status, list);
}

void DynamicRequests::forget(const std::string& nspace) {
  std::vector<std::uint64_t> spawns, connects, groups;
  for (const auto& [handle, spawn] : spawns_)
    if (spawn.nspace == nspace) spawns.push_back(handle);
  for (const auto& [handle, connect] : connects_)
    if (names(connect.nspaces, nspace)) connects.push_back(handle);
  for (const auto& [handle, group] : groups_)
    if (names(group.nspaces, nspace)) groups.push_back(handle);
  for (std::uint64_t handle : spawns)
    (void)complete(SpawnReply{handle, false, "", "the spawning job ended"});
  for (std::uint64_t handle : connects)
    (void)complete_connect(handle, PMIX_PROC_TERMINATED);
  for (std::uint64_t handle : groups)
    (void)complete_group(handle, PMIX_PROC_TERMINATED, std::nullopt);
}

}  // namespace grove::pmix_internal
