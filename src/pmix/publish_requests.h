// Internal to grove_pmix. The publish, lookup and unpublish requests a
// PmixServer has handed to its daemon and not yet answered, and how each
// answer goes back into libpmix. Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <string>

#include "pmix/upcall.h"
#include "util/result.h"

namespace grove::pmix_internal {

class PublishRequests {
 public:
  // Keeps the upcall's callback under a new handle, set in the message
  // returned (what the daemon forwards).
  PublishMessage take(PublishUpcall& upcall);
  LookupMessage take(LookupUpcall& upcall);
  UnpublishMessage take(UnpublishUpcall& upcall);

  // Answers a publish or an unpublish; errors: an unknown handle.
  Status complete_op(const PublishReply& reply);
  // Answers a lookup with the values found (unpacked for the client).
  Status complete_lookup(const LookupReply& reply);
  // The job ended: each of its requests still pending is answered with
  // PMIX_PROC_TERMINATED (libpmix 4.2 keeps a request until the host answers
  // it, whatever becomes of its job).
  void forget(const std::string& nspace);
  std::size_t pending() const { return ops_.size() + lookups_.size(); }

 private:
  struct PendingOp {
    pmix_op_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;
  };
  struct PendingLookup {
    pmix_lookup_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;
  };
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, PendingOp> ops_;
  std::map<std::uint64_t, PendingLookup> lookups_;
};

// The pmix_status_t for a store's answer.
pmix_status_t publish_status(PublishStatus status);

}  // namespace grove::pmix_internal
