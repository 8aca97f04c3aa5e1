#include "jobs/job_messages.h"

namespace grove {

bool JobSpec::wire_valid() const {
  if (argv.empty()) return false;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].rank != i) return false;
  }
  return true;
}

}  // namespace grove
