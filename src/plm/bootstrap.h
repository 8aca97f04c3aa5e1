// What a starting daemon reads on its private descriptor (an inherited pipe
// locally, ssh's standard input remotely): the DVM secret, then the spawn
// plan it needs to start its own children (tree spawn), if any. Nothing here
// is ever put on a command line or in the environment.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "plm/spawn_plan.h"
#include "util/bytes.h"
#include "util/result.h"

namespace grove {

struct RemoteSettings {
  std::string groved_path;  // the daemon binary on every remote host
  std::string prefix;       // GROVE_PREFIX / --prefix: bin and lib on remote hosts
  std::string controller_endpoint;
};

struct Bootstrap {
  std::vector<std::byte> secret;
  // Present for daemons started over ssh: the whole plan, to start children.
  std::optional<SpawnPlan> plan;
  RemoteSettings remote;
};

Bytes encode_spawn_plan(const SpawnPlan& plan, const RemoteSettings& remote);
Status decode_spawn_plan(std::span<const std::byte> bytes, SpawnPlan& plan, RemoteSettings& remote);

// The bytes write_bootstrap writes: the secret, the plan's length, the plan.
Bytes encode_bootstrap(const Bootstrap& bootstrap);
// Writes encode_bootstrap's bytes (blocking). Does not close fd.
Status write_bootstrap(int fd, const Bootstrap& bootstrap);
// Reads exactly what write_bootstrap wrote; end of input early is an Error.
Result<Bootstrap> read_bootstrap(int fd);

}  // namespace grove
