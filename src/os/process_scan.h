// Finding a job's processes wherever they went. A rank may start processes
// that leave its process group and its tree (setsid, a double fork): they
// keep its environment, and with it PMIX_NAMESPACE, which names one job of
// one DVM. At the job's end its daemons find them by it and end them.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace grove {

// The processes of this user, this one excepted, whose environment holds
// `entry` ("NAME=value") as a whole entry (/proc/PID/environ). A process
// that has changed its environment since it started is still found by what
// it started with; one that exec'd with another is not.
std::vector<pid_t> processes_with_environment(std::string_view entry);

// The same, with the value each holds for `name` (empty if it has none):
// on a host several daemons share, a daemon ends only what came from its
// own ranks (PMIX_RANK).
struct ProcessEnvironment {
  pid_t pid = 0;
  std::string value;
};
std::vector<ProcessEnvironment> processes_with_environment(std::string_view entry,
                                                           std::string_view name);

}  // namespace grove
