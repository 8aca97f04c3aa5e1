// grove names libpmix's status codes, event codes and keys in server.h, so
// that code outside src/pmix/ need not include libpmix; they must be the
// library's own values.
#include <pmix_server.h>

#include "pmix/event_messages.h"
#include "pmix/server.h"

namespace grove {

static_assert(kPmixSuccess == PMIX_SUCCESS);
static_assert(kPmixError == PMIX_ERROR);
static_assert(kPmixErrorTimeout == PMIX_ERR_TIMEOUT);
static_assert(kPmixErrorUnreachable == PMIX_ERR_UNREACH);
static_assert(kPmixErrorNotFound == PMIX_ERR_NOT_FOUND);
static_assert(kPmixErrorNotSupported == PMIX_ERR_NOT_SUPPORTED);
static_assert(kPmixProcTerminated == PMIX_PROC_TERMINATED);
static_assert(kPmixEventJobEnd == PMIX_EVENT_JOB_END);
static_assert(kPmixErrorJobNonZeroTerm == PMIX_ERR_JOB_NON_ZERO_TERM);
static_assert(kPmixErrorJobFailedToLaunch == PMIX_ERR_JOB_FAILED_TO_LAUNCH);
static_assert(kPmixEventNodeDown == PMIX_EVENT_NODE_DOWN);
static_assert(kPmixEventProcTerminated == PMIX_EVENT_PROC_TERMINATED);
static_assert(kPmixErrorProcRequestedAbort == PMIX_ERR_PROC_REQUESTED_ABORT);
static_assert(kPmixErrorProcTermWithoutSync == PMIX_ERR_PROC_TERM_WO_SYNC);
static_assert(kPmixErrorProcAbortedBySignal == PMIX_ERR_PROC_ABORTED_BY_SIG);
static_assert(kPmixGroupInviteDeclined == PMIX_GROUP_INVITE_DECLINED);
static_assert(kPmixErrorPartialSuccess == PMIX_ERR_PARTIAL_SUCCESS);
static_assert(kPmixErrorBadParam == PMIX_ERR_BAD_PARAM);
static_assert(kPmixErrorOutOfResource == PMIX_ERR_OUT_OF_RESOURCE);
static_assert(kPmixQueryNamespaces == PMIX_QUERY_NAMESPACES);
static_assert(kPmixJobSize == PMIX_JOB_SIZE);
static_assert(kPmixNumNodes == PMIX_NUM_NODES);
static_assert(kPmixQueryNumPsets == PMIX_QUERY_NUM_PSETS);
static_assert(kPmixQueryPsetNames == PMIX_QUERY_PSET_NAMES);
static_assert(PmixEvent::kRangeLocal == PMIX_RANGE_LOCAL);
static_assert(PmixEvent::kRangeNamespace == PMIX_RANGE_NAMESPACE);
static_assert(PmixEvent::kRangeSession == PMIX_RANGE_SESSION);
static_assert(PmixEvent::kRangeCustom == PMIX_RANGE_CUSTOM);
static_assert(PmixEvent::kRangeProcLocal == PMIX_RANGE_PROC_LOCAL);
static_assert(EventProc::kWholeJob == PMIX_RANK_WILDCARD);

}  // namespace grove
