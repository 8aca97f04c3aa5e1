// grove run's options: what a user may say about a job (mapping, output,
// environment, binding, hosts, stdin, the DVM to use), as parsed into
// RunOptions.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/job_output.h"

namespace grove {

struct RunOptions {
  std::uint32_t np = 0;  // 0: one rank per slot (no -n)
  bool oversubscribe = true;
  bool nooversubscribe = false;  // --nooversubscribe: oversubscribe false
  std::string map_by = "slot";
  OutputOptions output;
  std::string stdin_target = "0";   // all, none or a rank
  std::uint32_t npernode = 0;       // --npernode N: --map-by ppr:N:node
  std::string bind_to;              // empty: mpirun's default, chosen by the DVM
  std::string rank_by;              // empty: as mapped
  std::uint32_t cpus_per_rank = 0;  // -c K: --map-by ...:pe=K
  std::string hosts;                // -H a,b:4
  std::string hostfile;             // --hostfile FILE
  bool report_bindings = false;
  bool display_map = false;
  std::string mpi = "auto";  // --mpi: pmix, pmi1, pmi2 or auto
  bool verbose_to_terminal = false;
  std::uint32_t timeout_s = 0;
  std::vector<std::string> exports;   // -x VAR or VAR=value
  std::vector<std::string> settings;  // --env VAR=value
  bool no_forward_env = false;
  std::string wdir;
  std::string dvm;
  std::uint32_t daemons = 1;
  std::vector<std::string> command;
};

// Adds every option of grove run to `command`, in --help's order.
void add_run_options(CLI::App& command, RunOptions& options);

}  // namespace grove
