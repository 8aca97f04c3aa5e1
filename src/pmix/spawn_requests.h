// Internal to grove_pmix. The PMIx_Spawn requests a PmixServer has handed to
// its daemon and not yet answered. Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <string>

#include "pmix/upcall.h"
#include "util/result.h"

namespace grove::pmix_internal {

class SpawnRequests {
 public:
  // Keeps the upcall's callback under a new handle, set in the message
  // returned (what the daemon forwards).
  SpawnMessage take(SpawnUpcall& upcall);
  // Tells the spawning client the new job's nspace, or that it did not
  // start; errors: an unknown handle.
  Status complete(const SpawnReply& reply);
  // libpmix dropped the spawning job's requests with its registration.
  void forget(const std::string& nspace);
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    pmix_spawn_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;  // the spawning job's
  };
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, Pending> pending_;
};

}  // namespace grove::pmix_internal
