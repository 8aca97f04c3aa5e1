// Internal to grove_pmix. The PMIx_Query_info requests a PmixServer has
// handed to its daemon and not yet answered, and how an answer goes back
// into libpmix. Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pmix/upcall.h"
#include "util/result.h"

namespace grove::pmix_internal {

class QueryRequests {
 public:
  // Keeps the upcall's callback under a new handle, set in the call returned.
  PmixQueryCall take(QueryUpcall& upcall);
  // Answers with `answers` (one pmix_info_t each); errors: an unknown handle.
  Status complete(std::uint64_t handle, int status, const std::vector<PmixQueryAnswer>& answers);
  // The asking job ended: its queries still pending are answered with
  // PMIX_PROC_TERMINATED (libpmix 4.2 keeps them until then).
  void forget(const std::string& nspace);

 private:
  struct Pending {
    pmix_info_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;
  };
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, Pending> pending_;
};

}  // namespace grove::pmix_internal
