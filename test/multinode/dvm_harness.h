// What the DVM tests share besides the DVM itself (support/dvm.h): a guard
// for a daemonized controller, copies for other users, traffic sums.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/dvm.h"

namespace grove::test {

// A `grove start --daemonize` controller: a session of its own, so neither
// the test's destructors nor its signal handler (support/child_groups.h)
// would reach it. Tracked while the guard lives; when the guard goes, a
// controller still running (the test failed before `grove stop`) gets
// SIGTERM, then SIGKILL after 5 s.
class DaemonizedController {
 public:
  explicit DaemonizedController(pid_t pid);  // 0 or less: nothing to guard
  ~DaemonizedController();
  DaemonizedController(const DaemonizedController&) = delete;
  DaemonizedController& operator=(const DaemonizedController&) = delete;

 private:
  bool still_ours() const;  // the same process, not ended
  pid_t pid_;
  std::uint64_t start_ticks_ = 0;
};

// The controller pid `grove start --daemonize` printed (0 if none).
pid_t controller_pid_in(const std::string& start_output);

// Copies `from` into `dir`, readable and executable by everyone (for a
// program a test runs as another user).
std::string copy_for_everyone(const std::string& from, const std::string& dir);
// Sums an engine accounting table (status JSON) over entries matching a type and tag.
std::pair<std::uint64_t, std::uint64_t> sum_traffic(const nlohmann::json& table,
                                                    const std::string& type, const std::string& tag,
                                                    const std::string& topology = "");

// Every "rank R/N: K rounds ok, modex B bytes, digest D" line of
// pmix_fence_client's output: rank -> (modex bytes, digest).
std::map<int, std::pair<std::uint64_t, std::string>> fence_client_results(const std::string& out);

}  // namespace grove::test
