// What a job is asked to be: the program, its environment, how many ranks
// and how to map them. The control socket decodes it (control/control_request.h);
// the controller's job manager runs it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jobs/job_map.h"

namespace grove {

struct JobRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // NAME=value
  std::string cwd;
  std::uint32_t np = 1;
  MapSpec policy;
  std::uint32_t timeout_s = 0;  // 0: none
};

}  // namespace grove
