// A namespace swarm for a test (test/swarm/swarm.py): N hosts, each a
// network namespace with its own hostname, /etc/hosts view and real sshd,
// made for the test and deleted when the object goes away (with every
// process started in it).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/background_process.h"
#include "support/dvm.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace grove::test {

class Swarm {
 public:
  // Brings up `hosts` hosts named node0..node{hosts-1}; check ok() after.
  // With `slurm`, also a real Slurm cluster: munged and slurmctld on node0,
  // a slurmd on every host.
  explicit Swarm(int hosts, bool slurm = false);
  ~Swarm();
  Swarm(const Swarm&) = delete;
  Swarm& operator=(const Swarm&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_.path(); }
  // The client configuration every ssh of the swarm needs.
  std::string ssh_config() const { return dir() + "/ssh_config"; }
  // "ssh -F <swarm>/ssh_config": the value for plm_ssh_agent.
  std::string ssh_agent() const { return "ssh -F " + ssh_config(); }
  std::string host(int index) const { return "node" + std::to_string(index); }
  // "SLURM_CONF=...": every Slurm client of the swarm needs it.
  std::string slurm_conf_env() const { return "SLURM_CONF=" + dir() + "/slurm/slurm.conf"; }

  // Runs argv inside a host and waits for it.
  RunResult run(int host, const std::vector<std::string>& argv, const RunOptions& options = {});
  // Starts argv inside a host in the background.
  std::unique_ptr<BackgroundProcess> start(int host, const std::vector<std::string>& argv,
                                           const std::vector<std::string>& extra_env = {});
  // Where a DVM's controller and its commands run inside a host, with the
  // swarm's directory for TMPDIR (support/dvm.h).
  DvmPlace place(int host);
  // Faults: every process of a host killed; its sshd stopped; a directory hidden on it.
  bool kill_host(int host);
  bool stop_sshd(int host);
  bool hide(int host, const std::string& directory);
  // Processes now running in a host (its anchor excluded), as "pid command" lines.
  std::vector<std::string> processes(int host);
  // Processes in any host whose command line contains `needle`.
  std::vector<std::string> find_processes(const std::string& needle);
  // Writes a file into the swarm's directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    return dir_.write(name, text);
  }

 private:
  std::vector<std::string> wrap(int host, const std::vector<std::string>& argv) const;

  TempDir dir_;
  std::string script_;
  int hosts_ = 0;
  bool ok_ = false;
  std::string error_;
};

}  // namespace grove::test
