#include "pmix/publish_requests.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "pmix/packed_value.h"

namespace grove::pmix_internal {

pmix_status_t publish_status(PublishStatus status) {
  switch (status) {
    case PublishStatus::ok:
      return PMIX_SUCCESS;
    case PublishStatus::not_found:
      return PMIX_ERR_NOT_FOUND;
    case PublishStatus::duplicate_key:
      return PMIX_ERR_DUPLICATE_KEY;
    case PublishStatus::bad_param:
      return PMIX_ERR_BAD_PARAM;
  }
  return PMIX_ERROR;
}

namespace {

// Files the upcall's callback under a new handle, and hands on its message
// with that handle set.
template <typename Message, typename Pending, typename Upcall>
Message keep(std::uint64_t& next_handle, std::map<std::uint64_t, Pending>& pending,
             Upcall& upcall) {
  const std::uint64_t handle = next_handle++;
  pending[handle] = Pending{upcall.cbfunc, upcall.cbdata, upcall.message.nspace};
  Message message = std::move(upcall.message);
  message.handle = handle;
  return message;
}

}  // namespace

PublishMessage PublishRequests::take(PublishUpcall& upcall) {
  return keep<PublishMessage>(next_handle_, ops_, upcall);
}

UnpublishMessage PublishRequests::take(UnpublishUpcall& upcall) {
  return keep<UnpublishMessage>(next_handle_, ops_, upcall);
}

LookupMessage PublishRequests::take(LookupUpcall& upcall) {
  return keep<LookupMessage>(next_handle_, lookups_, upcall);
}

Status PublishRequests::complete_op(const PublishReply& reply) {
  auto pending = ops_.find(reply.handle);
  if (pending == ops_.end()) {
    return Error{"no pending publish or unpublish has handle " + std::to_string(reply.handle)};
  }
  PendingOp op = pending->second;
  ops_.erase(pending);
  if (op.cbfunc != nullptr) op.cbfunc(publish_status(reply.status), op.cbdata);
  return ok_status();
}

Status PublishRequests::complete_lookup(const LookupReply& reply) {
  auto pending = lookups_.find(reply.handle);
  if (pending == lookups_.end()) {
    return Error{"no pending lookup has handle " + std::to_string(reply.handle)};
  }
  PendingLookup lookup = pending->second;
  lookups_.erase(pending);
  if (lookup.cbfunc == nullptr) return ok_status();
  // libpmix copies the data inside the callback: ours is freed after it.
  std::vector<pmix_pdata_t> data(reply.found.size());
  std::size_t filled = 0;
  for (const FoundValueWire& found : reply.found) {
    pmix_pdata_t& entry = data[filled];
    PMIX_PDATA_CONSTRUCT(&entry);
    std::memcpy(entry.proc.nspace, found.nspace.data(),
                std::min<std::size_t>(found.nspace.size(), PMIX_MAX_NSLEN));
    entry.proc.rank = found.rank;
    std::memcpy(entry.key, found.key.data(),
                std::min<std::size_t>(found.key.size(), PMIX_MAX_KEYLEN));
    if (!unpack_value(found.value, entry.value)) {
      PMIX_PDATA_DESTRUCT(&entry);
      continue;  // a value that does not unpack is not handed on
    }
    ++filled;
  }
  pmix_status_t status = reply.timed_out ? PMIX_ERR_TIMEOUT : publish_status(reply.status);
  if (status == PMIX_SUCCESS && filled == 0) status = PMIX_ERR_NOT_FOUND;
  lookup.cbfunc(status, filled > 0 ? data.data() : nullptr, filled, lookup.cbdata);
  for (std::size_t i = 0; i < filled; ++i)
    PMIX_PDATA_DESTRUCT(&data[i]);
  return ok_status();
}

void PublishRequests::forget(const std::string& nspace) {
  for (auto entry = ops_.begin(); entry != ops_.end();) {
    if (entry->second.nspace != nspace) {
      ++entry;
      continue;
    }
    const PendingOp op = entry->second;
    entry = ops_.erase(entry);
    if (op.cbfunc != nullptr) op.cbfunc(PMIX_PROC_TERMINATED, op.cbdata);
  }
  for (auto entry = lookups_.begin(); entry != lookups_.end();) {
    if (entry->second.nspace != nspace) {
      ++entry;
      continue;
    }
    const PendingLookup lookup = entry->second;
    entry = lookups_.erase(entry);
    if (lookup.cbfunc != nullptr) lookup.cbfunc(PMIX_PROC_TERMINATED, nullptr, 0, lookup.cbdata);
  }
}

}  // namespace grove::pmix_internal
