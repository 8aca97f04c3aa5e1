// A real DVM for a test, wherever it runs: `grove start` in the foreground
// as a child of the test (so its log, and the daemons' passed through by
// their launcher, is captured), with a TMPDIR of its own; grove commands
// then talk to it through the URI it reported. Ended by `grove stop`, then
// by PID, whatever happens.
//
// Where is a DvmPlace: this host (Dvm(int daemons, ...), the local
// launcher), or one host of a namespace swarm (Swarm::place, the ssh and
// Slurm launchers), where the controller may run under a wrapper such as
// `salloc -N 4`.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support/background_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace grove::test {

struct DvmPlace {
  std::string tmpdir;  // TMPDIR of the controller and of every command
  std::function<std::unique_ptr<BackgroundProcess>(const std::vector<std::string>& argv,
                                                   const std::vector<std::string>& env)>
      start;
  std::function<RunResult(const std::vector<std::string>& argv, const RunOptions& options)> run;
};

struct DvmStart {
  std::vector<std::string> wrapper;  // before `grove start` (e.g. salloc and its options)
  std::vector<std::string> args;     // after `grove start --report-uri FILE`
  std::vector<std::string> env;      // "NAME=VALUE" for `grove start` and every command
};

std::string grove_binary();

class Dvm {
 public:
  // `grove start --local N ARGS` on this host, in a private TMPDIR (or
  // `shared_tmpdir`'s), `extra_env` for it alone; waits until it is ready.
  explicit Dvm(int daemons, const std::vector<std::string>& extra_args = {},
               const std::vector<std::string>& extra_env = {},
               const TempDir* shared_tmpdir = nullptr);
  // `WRAPPER grove start --report-uri FILE ARGS` where `place` says; does
  // not wait (ready() does).
  Dvm(DvmPlace place, const DvmStart& start);
  ~Dvm();
  Dvm(const Dvm&) = delete;
  Dvm& operator=(const Dvm&) = delete;

  // Whether the DVM has said it is ready, waiting up to `timeout` for it.
  bool ready(std::chrono::milliseconds timeout = std::chrono::seconds(60));
  BackgroundProcess& controller() { return *controller_; }
  const std::string& tmpdir() const { return place_.tmpdir; }

  // `grove ARGS[0] --dvm URI ARGS[1..]` (--dvm right after the subcommand:
  // for `grove run` anything after the program is the program's), waited
  // for, or in the background.
  RunResult grove(std::vector<std::string> args,
                  std::chrono::milliseconds timeout = std::chrono::seconds(60));
  std::unique_ptr<BackgroundProcess> start_grove(std::vector<std::string> args);
  // `grove status --json` and `grove bench ... --json`; throw if they fail.
  nlohmann::json status();
  // One daemon's state in `grove status` ("up", "failed", ...), or "absent".
  std::string daemon_state(unsigned vpid);
  nlohmann::json bench(const std::string& kind, const std::string& size, int count);
  // `grove stop`, then the controller's exit; the destructor does it too if
  // needed.
  RunResult stop();

 private:
  static int controller_count();
  std::vector<std::string> start_argv(const DvmStart& start) const;
  std::vector<std::string> grove_argv(std::vector<std::string> args) const;
  std::vector<std::string> command_env() const;

  std::unique_ptr<TempDir> owned_tmpdir_;
  DvmPlace place_;
  std::vector<std::string> env_;  // DvmStart::env
  std::string uri_file_;
  std::unique_ptr<BackgroundProcess> controller_;
  bool stopped_ = false;
};

}  // namespace grove::test
