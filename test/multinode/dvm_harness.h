// A real DVM for a test: `grove start --local N` in the foreground as a child
// of the test, in a private TMPDIR (so its session directory is the test's
// own), ended by `grove stop` and then by PID whatever happens.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
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

std::string grove_binary();
// Sums an engine accounting table (status JSON) over entries matching a type and tag.
std::pair<std::uint64_t, std::uint64_t> sum_traffic(const nlohmann::json& table,
                                                    const std::string& type, const std::string& tag,
                                                    const std::string& topology = "");

}  // namespace grove::test
