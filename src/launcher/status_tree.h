// grove status --tree (status_tree.cc).
#pragma once

#include <nlohmann/json.hpp>

#include "launcher/cli_context.h"

namespace grove {

// Prints the routing and release trees of a `status` reply, as text or as
// the reply with "trees" and "tree_states" added. Returns the exit code.
int print_status_tree(nlohmann::json status, bool json);

}  // namespace grove
