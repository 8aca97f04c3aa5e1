// Starts the daemons of a DVM inside a Slurm allocation: one `srun` step
// with one daemon per node, as PRRTE's plm/slurm does. Each daemon's vpid
// is the first remote vpid plus its SLURM_NODEID (srun numbers a step's nodes
// in the allocation's order, which is the plan's). The bootstrap goes to
// srun's standard input, which srun copies to every task; srun's own output
// is kept and shown when the step fails (PRRTE dropped it).
#pragma once

#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "os/event_ptr.h"
#include "os/io_watch.h"
#include "plm/bootstrap.h"
#include "plm/remote_launcher.h"
#include "util/log.h"

namespace grove {

struct SrunLaunchConfig {
  std::vector<std::string> srun = {"srun"};  // plm_slurm_srun: the command
  std::vector<std::string> extra_args;       // plm_slurm_args: before the daemon's command
  std::vector<std::string> param_arguments;  // --mca NAME VALUE ..., passed on
  Bootstrap bootstrap;                       // the plan (vpid 0 is ours) and remote settings
  // The step's daemons: vpids first_vpid.. (count of them; 0: to the plan's
  // end), on their hosts in the allocation's order (srun numbers them so).
  Vpid first_vpid = 1;
  std::uint32_t count = 0;
  // Daemons grown into a running DVM (grove grow --activate, a respawn):
  // --join, and --overlap (the node may still be in an older step).
  bool joining = false;

  std::uint32_t daemons() const { return count != 0 ? count : bootstrap.plan->size() - first_vpid; }
};

// The srun command line: one task on each host of the step's vpids, the
// daemon after it.
std::vector<std::string> srun_argv(const SrunLaunchConfig& config);
// What srun's environment adds to ours ("NAME=VALUE"): with a prefix, its
// bin and lib first on PATH and LD_LIBRARY_PATH (srun passes its
// environment on to the tasks).
std::vector<std::string> srun_environment(const SrunLaunchConfig& config, const char* path,
                                          const char* library_path);

class SrunLauncher : public RemoteLauncher {
 public:
  struct Hooks {
    // srun ended: how ("exited with status 1") and its last output lines.
    std::function<void(const std::string& how, const std::string& last_lines)> on_exit;
  };
  SrunLauncher(event_base* base, Log& log, SrunLaunchConfig config, Hooks hooks);
  // Ends srun if it still runs (SIGTERM: Slurm then ends the step).
  ~SrunLauncher() override;
  SrunLauncher(const SrunLauncher&) = delete;
  SrunLauncher& operator=(const SrunLauncher&) = delete;

  Status start();
  void reap() override;
  std::size_t running() const override { return pid_ > 0 ? 1 : 0; }
  void signal_all(int signal) override;

 private:
  void on_output(bool is_stderr);
  void write_bootstrap_part();
  void close_pipes();
  std::string last_lines() const;

  event_base* base_;
  Log& log_;
  SrunLaunchConfig config_;
  Hooks hooks_;
  Bytes bootstrap_bytes_;
  std::size_t written_ = 0;
  int pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  IoWatch in_event_, out_event_, err_event_;
  std::string out_buffer_, err_buffer_;
  std::deque<std::string> tail_;  // srun's and the daemons' last lines
  std::uint32_t up_ = 0;
};

}  // namespace grove
