// PmixServer::notify: events the daemon hands to its clients.
#include <pmix_server.h>

#include "pmix/async_ops.h"
#include "pmix/event_info.h"
#include "pmix/server.h"

namespace grove {

using pmix_internal::describe;

namespace {
void release_event_info(pmix_status_t, void* cbdata) {
  delete static_cast<pmix_internal::InfoArray*>(cbdata);
}
}  // namespace

Status PmixServer::notify(const PmixEvent& event) {
  Result<pmix_internal::InfoArray> info = pmix_internal::event_info(event);
  if (!info) return info.error();
  // Never the server itself as the source: libpmix would pass the event up
  // to this host again.
  pmix_proc_t source;
  PMIX_LOAD_PROCID(&source,
                   event.source_nspace.empty() ? kPmixDvmSource : event.source_nspace.c_str(),
                   event.source_nspace.empty() ? 0 : event.source_rank);
  auto* held = new pmix_internal::InfoArray(std::move(*info));
  pmix_status_t status = PMIx_Notify_event(
      event.code, &source, pmix_internal::delivery_range(event),
      held->size() > 0 ? held->data() : nullptr, held->size(), release_event_info, held);
  if (status != PMIX_SUCCESS) {
    delete held;  // the callback never comes
    if (status != PMIX_OPERATION_SUCCEEDED) return Error{describe("PMIx_Notify_event", status)};
  }
  return ok_status();
}

}  // namespace grove
