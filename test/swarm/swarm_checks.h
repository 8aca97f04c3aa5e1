// What the swarm tests check after a job or a stop, whatever the launcher.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "swarm/swarm_harness.h"

namespace grove::test {

// Waits until no process of any host runs `needle`; returns what is left.
std::vector<std::string> wait_gone(Swarm& swarm, const std::string& needle,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(15));

// The pid of the process of `host` whose command line contains `needle`; 0 if none.
int pid_on(Swarm& swarm, int host, const std::string& needle);

// The fence client's "rank R/N: ... digest D, local L/M on HOST" lines:
// rank -> (digest, host).
std::map<int, std::pair<std::string, std::string>> fence_results(const std::string& out);

}  // namespace grove::test
