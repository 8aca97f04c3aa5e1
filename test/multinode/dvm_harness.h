// A real DVM for a test: `grove start --local N` in the foreground as a child
// of the test, in a private TMPDIR (so its session directory is the test's
// own), ended by `grove stop` and then by PID whatever happens.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/background_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace grove::test {

class Dvm {
 public:
  explicit Dvm(int daemons, const std::vector<std::string>& extra_args = {},
               const std::vector<std::string>& extra_env = {},
               const TempDir* shared_tmpdir = nullptr);
  ~Dvm();

  bool ready() const { return ready_; }
  // Runs the grove CLI against this DVM (same TMPDIR); `--dvm` is added.
  RunResult grove(std::vector<std::string> args,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60));
  nlohmann::json status();
  nlohmann::json bench(const std::string& kind, const std::string& size, int count);
  // `grove stop`; returns its result. The destructor does it too if needed.
  RunResult stop();
  BackgroundProcess& controller() { return *controller_; }
  const std::string& tmpdir() const { return tmpdir_->path(); }

 private:
  std::unique_ptr<TempDir> owned_tmpdir_;
  const TempDir* tmpdir_ = nullptr;
  std::unique_ptr<BackgroundProcess> controller_;
  bool ready_ = false;
  bool stopped_ = false;
};

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

std::string grove_binary();
// Copies `from` into `dir`, readable and executable by everyone (for a
// program a test runs as another user).
std::string copy_for_everyone(const std::string& from, const std::string& dir);
// Sums an engine accounting table (status JSON) over entries matching a type and tag.
std::pair<std::uint64_t, std::uint64_t> sum_traffic(const nlohmann::json& table,
                                                    const std::string& type, const std::string& tag,
                                                    const std::string& topology = "");

}  // namespace grove::test
