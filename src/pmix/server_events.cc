// PmixServer::notify: events the daemon hands to its clients.
#include <pmix_server.h>

#include "pmix/async_ops.h"
#include "pmix/info_list.h"
#include "pmix/server.h"

namespace grove {

using pmix_internal::describe;

namespace {
void release_event_info(pmix_status_t, void* cbdata) {
  delete static_cast<pmix_internal::InfoArray*>(cbdata);
}
}  // namespace

Status PmixServer::notify(const PmixEvent& event) {
  pmix_internal::InfoList list;
  if (!event.affected_nspace.empty()) {
    list.add_proc(
        PMIX_EVENT_AFFECTED_PROC, event.affected_nspace,
        event.affected_rank == PmixEvent::kWholeJob ? PMIX_RANK_WILDCARD : event.affected_rank);
  }
  if (event.has_status) list.add_status(PMIX_JOB_TERM_STATUS, event.status);
  if (!event.message.empty()) list.add_string(PMIX_EVENT_TEXT_MESSAGE, event.message);
  Result<pmix_internal::InfoArray> info = list.take_array();
  if (!info) return info.error();
  // Never the server itself as the source: libpmix would pass the event up
  // to this host again.
  pmix_proc_t source;
  PMIX_LOAD_PROCID(&source,
                   event.source_nspace.empty() ? kPmixDvmSource : event.source_nspace.c_str(),
                   event.source_nspace.empty() ? 0 : event.source_rank);
  auto* held = new pmix_internal::InfoArray(std::move(*info));
  pmix_status_t status = PMIx_Notify_event(
      event.code, &source, static_cast<pmix_data_range_t>(event.range),
      held->size() > 0 ? held->data() : nullptr, held->size(), release_event_info, held);
  if (status != PMIX_SUCCESS) {
    delete held;  // the callback never comes
    if (status != PMIX_OPERATION_SUCCEEDED) return Error{describe("PMIx_Notify_event", status)};
  }
  return ok_status();
}

}  // namespace grove
