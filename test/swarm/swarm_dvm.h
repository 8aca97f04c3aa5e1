// A DVM on a namespace swarm for a test: `grove start` runs on node0 in the
// foreground (so its log, and the daemons' passed through by their launcher,
// is captured), possibly under a wrapper such as `salloc -N 4`; grove
// commands then talk to it from node0.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "swarm/swarm_harness.h"

namespace grove::test {

struct DvmStart {
  std::vector<std::string> wrapper;  // before `grove start` (e.g. salloc and its options)
  std::vector<std::string> args;     // after `grove start --report-uri FILE`
  std::vector<std::string> env;      // "NAME=VALUE", besides TMPDIR in the swarm's directory
};

std::string grove_bin();

class SwarmDvm {
 public:
  SwarmDvm(Swarm& swarm, const DvmStart& start);
  // Stops the DVM if it still runs; then ends `grove start` (and its wrapper).
  ~SwarmDvm();
  SwarmDvm(const SwarmDvm&) = delete;
  SwarmDvm& operator=(const SwarmDvm&) = delete;

  // Whether the DVM said it is ready within the timeout.
  bool ready(std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return controller_->wait_for("DVM ready", timeout);
  }
  BackgroundProcess& controller() { return *controller_; }

  // `grove ARGS[0] --dvm ... ARGS[1..]` on node0: in the background, or waited for.
  std::unique_ptr<BackgroundProcess> start_grove(std::vector<std::string> args);
  RunResult grove(std::vector<std::string> args,
                  std::chrono::milliseconds timeout = std::chrono::seconds(120));
  // `grove status --json`, or an empty object if it failed.
  nlohmann::json status();
  void stop();

 private:
  std::vector<std::string> grove_argv(std::vector<std::string> args);
  std::vector<std::string> environment() const;

  Swarm& swarm_;
  std::string uri_;
  std::vector<std::string> env_;
  std::unique_ptr<BackgroundProcess> controller_;
};

}  // namespace grove::test
