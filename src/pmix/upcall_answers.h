// Internal to grove_pmix. The PmixAnswer for each kind of upcall a daemon
// answers later: how its values go back into libpmix's callback. A null
// cbfunc (libpmix wants no answer) makes an answer that does nothing.
// Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "pmix/answer_registry.h"
#include "pmix/server.h"

namespace grove::pmix_internal {

// A fence's aggregate or a direct-modex request's blob.
PmixAnswer<std::vector<std::byte>> modex_answer(AnswerRegistry& registry, AnswerKind kind,
                                                pmix_modex_cbfunc_t cbfunc, void* cbdata);
// A connect or disconnect; the end of any participating job answers it
// PMIX_PROC_TERMINATED (libpmix 4.2 keeps the request until the host does).
PmixAnswer<> connect_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                            std::vector<std::string> nspaces);
// A group operation, with PMIX_GROUP_CONTEXT_ID when one is given; as a
// connect for the members' jobs.
PmixAnswer<std::optional<std::uint64_t>> group_answer(AnswerRegistry& registry,
                                                      pmix_info_cbfunc_t cbfunc, void* cbdata,
                                                      std::vector<std::string> nspaces);
// A publish or an unpublish; a lookup, with the values found (unpacked for
// the client; none found is PMIX_ERR_NOT_FOUND). The asking job's end
// answers them PMIX_PROC_TERMINATED.
PmixAnswer<> publish_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                            const std::string& asker);
PmixAnswer<std::vector<FoundValueWire>> lookup_answer(AnswerRegistry& registry,
                                                      pmix_lookup_cbfunc_t cbfunc, void* cbdata,
                                                      const std::string& asker);
// A spawn: the new job's nspace with kPmixSuccess, or an error (the
// spawning job's end answers PMIX_ERR_JOB_FAILED_TO_LAUNCH).
PmixAnswer<std::string> spawn_answer(AnswerRegistry& registry, pmix_spawn_cbfunc_t cbfunc,
                                     void* cbdata, const std::string& asker);
// A log request's status; the asking job's end answers it
// PMIX_PROC_TERMINATED.
PmixAnswer<> log_answer(AnswerRegistry& registry, pmix_op_cbfunc_t cbfunc, void* cbdata,
                        const std::string& asker);
// A query, one pmix_info_t per answer; the asking job's end answers it
// PMIX_PROC_TERMINATED.
PmixAnswer<std::vector<PmixQueryAnswer>> query_answer(AnswerRegistry& registry,
                                                      pmix_info_cbfunc_t cbfunc, void* cbdata,
                                                      const std::string& asker);

}  // namespace grove::pmix_internal
