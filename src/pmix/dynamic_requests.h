// Internal to grove_pmix. The requests about dynamic processes (PMIx_Spawn,
// PMIx_Connect, PMIx_Disconnect, process groups) a PmixServer has handed to its daemon and
// not yet answered. Loop thread only.
#pragma once

#include <pmix_server.h>

#include <cstdint>
#include <map>
#include <optional>
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
  PmixConnectCall take(ConnectUpcall& upcall);
  PmixGroupCall take(GroupUpcall& upcall);
  // Tells the spawning client the new job's nspace, or that it did not
  // start; errors: an unknown handle.
  Status complete(const SpawnReply& reply);
  // Ends a connect or disconnect with `status`; errors: an unknown handle.
  Status complete_connect(std::uint64_t handle, int status);
  // Ends a group operation with `status` (and PMIX_GROUP_CONTEXT_ID when
  // given); errors: an unknown handle, or the answer could not be built.
  Status complete_group(std::uint64_t handle, int status, std::optional<std::uint64_t> context_id);
  // A job ended: its spawns, and every connect or group that names it
  // (another job's too: it can no longer complete), are answered with an
  // error (libpmix 4.2 keeps a request until the host answers it).
  void forget(const std::string& nspace);
  std::size_t pending() const { return spawns_.size() + connects_.size() + groups_.size(); }

 private:
  struct PendingSpawn {
    pmix_spawn_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::string nspace;  // the spawning job's
  };
  struct PendingConnect {
    pmix_op_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::vector<std::string> nspaces;  // the participants'
  };
  struct PendingGroup {
    pmix_info_cbfunc_t cbfunc = nullptr;
    void* cbdata = nullptr;
    std::vector<std::string> nspaces;  // the members'
  };
  // Keeps a connect's or a group's callback under a new handle.
  template <typename Pending, typename Upcall>
  auto take_collective(std::map<std::uint64_t, Pending>& pending_calls, Upcall& upcall);
  std::uint64_t next_handle_ = 1;
  std::map<std::uint64_t, PendingSpawn> spawns_;
  std::map<std::uint64_t, PendingConnect> connects_;
  std::map<std::uint64_t, PendingGroup> groups_;
};

}  // namespace grove::pmix_internal
