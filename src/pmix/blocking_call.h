// Internal to grove_pmix. A libpmix call that finishes through a
// pmix_op_cbfunc_t on PMIx's progress thread, waited for on the caller's
// thread with a deadline (registrations take milliseconds; a stuck progress
// thread must not hang the daemon).
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <functional>
#include <string>

#include "util/result.h"

namespace grove::pmix_internal {

// "CALL: PMIx's name for status".
std::string describe(const char* call, pmix_status_t status);

// Starts the call with a callback of ours and waits for it (30 s at most);
// PMIX_OPERATION_SUCCEEDED from `start` means done at once. Errors name
// `what`.
using OpStart = std::function<pmix_status_t(pmix_op_cbfunc_t, void*)>;
Status run_blocking(const std::string& what, const OpStart& start);

}  // namespace grove::pmix_internal
