// Internal to grove_pmix. The PMIx_Spawn requests a PmixServer has handed to
// its daemon and not yet answered (they travel to the controller by handle).
// Connects and groups are answered through their PmixAnswer
// (upcall_answers.h). Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pmix/upcall.h"
#include "util/result.h"

namespace grove::pmix_internal {

class DynamicRequests {
 public:
  // Keep the upcall's callback under a new handle, set in what is returned
  // (what the daemon is handed).
  SpawnMessage take(SpawnUpcall& upcall);
  // Tells the spawning client the new job's nspace, or that it did not
  // start; errors: an unknown handle.
  Status complete(const SpawnReply& reply);
  // A job ended: its spawns are answered with an error (libpmix 4.2 keeps
  // a request until the host answers it).
  void forget(const std::string& nspace);
  std::size_t pending() const { return spawns_.size(); }

 private:
  struct PendingSpawn {
    pmix_spawn_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;  // the spawning job's
  };
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, PendingSpawn> spawns_;
};

}  // namespace grove::pmix_internal
