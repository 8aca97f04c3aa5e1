// Starts groved processes on this host: fork, hand over the bootstrap (the
// DVM secret) on an inherited pipe (never argv, never a file), exec.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "rml/membership.h"
#include "util/result.h"

namespace grove {

struct LaunchRequest {
  std::string groved_path;
  Vpid vpid = 1;
  std::uint32_t dvm_size = 2;
  std::string controller_endpoint;
  std::string session_dir;
  std::vector<std::string> param_arguments;  // --mca name value ...
  std::vector<std::byte> secret;
  std::string topology_xml;  // this host's topology, exported by the controller; may be empty
  std::optional<unsigned> cpu_slot;  // bind the daemon to this CPU slot (daemon_bind_local)
  bool joining = false;              // grown into a running DVM (groved --join)
};

// Returns the child's pid. The child dies with SIGTERM if the controller dies.
Result<int> launch_local_daemon(const LaunchRequest& request);

// Where groved lives: $GROVE_GROVED, else next to this executable, else PATH.
std::string find_groved();

}  // namespace grove
