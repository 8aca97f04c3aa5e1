#include "pmix/query_requests.h"

#include "pmix/info_list.h"

namespace grove::pmix_internal {

PmixQueryCall QueryRequests::take(QueryUpcall& upcall) {
  const std::uint64_t handle = next_handle_++;
  pending_[handle] = Pending{upcall.cbfunc, upcall.cbdata, upcall.call.nspace};
  PmixQueryCall call = std::move(upcall.call);
  call.handle = handle;
  return call;
}

Status QueryRequests::complete(std::uint64_t handle, int status,
                               const std::vector<PmixQueryAnswer>& answers) {
  auto found = pending_.find(handle);
  if (found == pending_.end()) {
    return Error{"no pending query has handle " + std::to_string(handle)};
  }
  Pending request = found->second;
  pending_.erase(found);
  if (request.cbfunc == nullptr) return ok_status();
  InfoList list;
  for (const PmixQueryAnswer& answer : answers) {
    if (const auto* text = std::get_if<std::string>(&answer.value)) {
      list.add_string(answer.key.c_str(), *text);
    } else if (const auto* count = std::get_if<std::size_t>(&answer.value)) {
      list.add_size(answer.key.c_str(), *count);
    } else {
      list.add_u32(answer.key.c_str(), std::get<std::uint32_t>(answer.value));
    }
  }
  return answer_info(request.cbfunc, request.cbdata, status, list);
}

void QueryRequests::forget(const std::string& nspace) {
  std::vector<std::uint64_t> handles;
  for (const auto& [handle, request] : pending_)
    if (request.nspace == nspace) handles.push_back(handle);
  for (std::uint64_t handle : handles)
    (void)complete(handle, PMIX_PROC_TERMINATED, {});
}

}  // namespace grove::pmix_internal
