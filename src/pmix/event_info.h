// Internal to grove_pmix. A PMIx event between libpmix's form (a code, a
// source, a range and an info array) and grove's (PmixEvent): the keys that
// decide who receives it (custom targets, affected processes, non-default,
// caching) and its status, exit code and text are read out; every other
// entry is carried packed, so a group's invitation reaches the invited ranks
// of another daemon with its group id.
#pragma once

#include <pmix.h>

#include "pmix/event_messages.h"
#include "pmix/info_list.h"
#include "util/result.h"

namespace grove::pmix_internal {

// A local client's event as libpmix's notify_event upcall hands it over.
// Entries that only libpmix's own server means (its internal marks) are
// dropped; an entry whose value cannot be packed is dropped too.
PmixEvent event_from_upcall(pmix_status_t code, const pmix_proc_t* source, pmix_data_range_t range,
                            const pmix_info_t info[], std::size_t ninfo);

// The info array for PMIx_Notify_event. A namespace range becomes a custom
// one over the source's namespace: libpmix 4.2's server checks a range only
// against custom targets, so a NAMESPACE event would reach every job.
Result<InfoArray> event_info(const PmixEvent& event);
pmix_data_range_t delivery_range(const PmixEvent& event);

}  // namespace grove::pmix_internal
