// Each `grove` subcommand registers itself on the app: its options, its help,
// and its action in context.actions.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include "launcher/cli_context.h"

namespace grove {

void add_info_command(CLI::App& app, CliContext& context);
void add_model_command(CLI::App& app, CliContext& context);
void add_topo_command(CLI::App& app, CliContext& context);
void add_sim_command(CLI::App& app, CliContext& context);
void add_dvm_commands(CLI::App& app, CliContext& context);
void add_run_command(CLI::App& app, CliContext& context);
void add_job_commands(CLI::App& app, CliContext& context);
void add_shrink_command(CLI::App& app, CliContext& context);
void add_grow_command(CLI::App& app, CliContext& context);
void add_log_command(CLI::App& app, CliContext& context);
void add_tune_command(CLI::App& app, CliContext& context);
// The jobs table of `grove ps` (and `grove status`): running jobs, and the
// recently ended ones too when `all`.
void print_jobs(const nlohmann::json& jobs, bool all);
// What `grove start --local N --daemonize --report-uri FILE` does, from this
// process (no exec: `grove run` starting its own DVM saves a program load):
// returns once the DVM is ready, its control URI in `uri_file`.
// `verbose_to_terminal`: its log comes to this process's stderr as well.
// `hosts`: grove start's --host and --hostfile (empty: `daemons` here).
// The controller's pid (a child of this process, to be waited for).
struct DvmHosts {
  std::string hosts;     // -H a,b:4
  std::string hostfile;  // --hostfile FILE
};
Result<pid_t> start_local_dvm(CliContext& context, std::uint32_t daemons,
                              const std::string& uri_file, bool verbose_to_terminal,
                              const DvmHosts& hosts = {});
// What `grove run` exits with when its own command line is wrong (an unknown
// option, a bad value, no program): as timeout(1) and env(1) answer their own
// failures, below 126/127 (the program cannot run) and 128+N (a signal), so a
// script tells it from its job's status (docs/jobs.md).
inline constexpr int kRunUsageError = 125;

// Before parsing `grove run`: rewrites mpirun's `-np` and `-mca` to `--np` and
// `--mca` and refuses an unknown option ahead of the program (it would
// otherwise become the program).
// `args` is the whole command line; `first` is the word after "run". A `--`
// among the options ends them: it and what follows leave `args` for
// `program`.
Status normalize_run_arguments(const CLI::App& run, std::vector<std::string>& args,
                               std::size_t first, std::vector<std::string>& program);

}  // namespace grove
