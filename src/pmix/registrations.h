// Internal to grove_pmix. What a daemon registers with libpmix before its
// ranks run, and forgets after: jobs (PMIx_server_register_nspace, then
// setup_local_support) and clients (register_client; setup_fork gives the
// child's environment). Every call is answered later on the loop
// (async_ops.h): nothing here waits for libpmix's progress thread.
#pragma once

#include <pmix.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pmix/async_ops.h"
#include "pmix/server.h"

namespace grove::pmix_internal {

pmix_proc_t make_proc(const std::string& nspace, std::uint32_t rank);

class Registrations {
 public:
  Registrations(AsyncOps& ops, std::uint32_t daemon_vpid) : ops_(ops), daemon_vpid_(daemon_vpid) {}

  void register_job(const PmixJob& job, AsyncOps::Done done);
  void register_client(const std::string& nspace, std::uint32_t rank, uid_t uid, gid_t gid,
                       AsyncOps::Done done);
  // PMIx_server_setup_fork for a registered client (libpmix 4.2 does it on
  // the calling thread without waiting).
  Result<std::vector<std::string>> client_environment(const std::string& nspace,
                                                      std::uint32_t rank);
  void deregister_job(const std::string& nspace, AsyncOps::Done done);

 private:
  AsyncOps& ops_;
  std::uint32_t daemon_vpid_;
};

}  // namespace grove::pmix_internal
