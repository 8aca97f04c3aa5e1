#include "launcher/run_options.h"

#include <map>

#include "jobs/job_map.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "util/text.h"

namespace grove {

Status normalize_run_arguments(const CLI::App& run, std::vector<std::string>& args,
                               std::size_t first, std::vector<std::string>& program) {
  // How many values each of run's options takes, by every spelling.
  std::map<std::string, int> arity;
  for (const CLI::Option* option : run.get_options()) {
    // A repeatable option (-x, --env) takes one value per use, whatever
    // CLI11 says it may collect in all.
    const int values = std::min(1, std::max(0, option->get_items_expected_max()));
    for (const auto& name : option->get_lnames())
      arity["--" + name] = values;
    for (const auto& name : option->get_snames())
      arity["-" + name] = values;
  }
  for (std::size_t at = first; at < args.size(); ++at) {
    std::string& word = args[at];
    if (word == "--") {
      program.assign(args.begin() + static_cast<std::ptrdiff_t>(at) + 1, args.end());
      args.resize(at);
      return ok_status();
    }
    if (word.empty() || word[0] != '-' || word == "-") return ok_status();
    if (word == "-np") word = "--np";  // mpirun's spellings
    if (word == "-mca" || word == "-prtemca") word = "-" + word;
    std::string name = word.substr(0, word.find('='));
    auto known = arity.find(name);
    if (known == arity.end()) {
      return Error{"grove run: unknown option '" + name +
                   "' (see 'grove run --help'; a program whose name starts with '-' goes after "
                   "--)"};
    }
    if (name.size() == word.size()) at += static_cast<std::size_t>(known->second);
  }
  return ok_status();
}

// How many ranks and where they go: -n, --oversubscribe, --map-by.
void add_mapping_options(CLI::App& command, RunOptions& options) {
  command
      .add_option("-n,--np", options.np,
                  "Number of ranks (default: one per slot of the DVM's hosts, as mpirun)")
      ->check(CLI::Range(1u, 1u << 22));
  auto* over = command.add_flag(
      "--oversubscribe", options.oversubscribe,
      "Allow more ranks than slots (the default; ranks are told they share cores)");
  command
      .add_flag("--nooversubscribe", options.nooversubscribe,
                "Refuse more ranks than the hosts' slots, as mpirun does")
      ->excludes(over);
  command
      .add_option(
          "--map-by", options.map_by,
          "slot or core (fill each daemon's slots), node (round robin), ppr:N:node or ppr:N:socket")
      ->check([](const std::string& text) {
        auto spec = parse_map_policy(text);
        return spec ? std::string() : spec.error().message;
      })
      ->capture_default_str();
}

// How the ranks' output shows: tagged, timestamped, or in files.
void add_output_options(CLI::App& command, OutputOptions& output) {
  command.add_flag("--tag-output", output.tag, "Prefix every line with [job,rank]<stdout|stderr>:");
  command.add_flag("--timestamp-output", output.timestamp,
                   "Prefix every line with the date and time its daemon read it");
  command
      .add_option("--output-filename", output.directory,
                  "Write each rank's output to DIR/JOB/rank.N/stdout and stderr instead of "
                  "this terminal")
      ->type_name("DIR");
}

// What the ranks get of this environment, and where they run.
void add_environment_options(CLI::App& command, RunOptions& options) {
  command
      .add_option("-x", options.exports,
                  "Export VAR (or VAR=value) to every rank (repeatable; with --no-forward-env "
                  "the way to pass this environment's variables)")
      ->type_name("VAR")
      ->allow_extra_args(false);
  command.add_option("--env", options.settings, "Set VAR=value for every rank (repeatable)")
      ->type_name("VAR=value")
      ->allow_extra_args(false);
  command.add_flag("--no-forward-env", options.no_forward_env,
                   "Ranks get the daemons' environment (as grove start had it) plus -x and "
                   "--env, not this one");
  command
      .add_option("--wdir,--cwd", options.wdir,
                  "Directory the ranks run in (default: this one; relative to this one)")
      ->type_name("DIR");
}

// Ranks per daemon, cores per rank, binding and rank order.
void add_binding_options(CLI::App& command, RunOptions& options) {
  command
      .add_option("-N,--npernode", options.npernode,
                  "N ranks on every daemon (--map-by ppr:N:node; mpirun's -N)")
      ->check(CLI::Range(1u, 65535u))
      ->excludes("--map-by");
  command
      .add_option("--bind-to", options.bind_to,
                  "Bind each rank to a core, hwthread or socket of its host, round robin, or "
                  "none (default as mpirun: core for 1 or 2 ranks, socket for more, none when "
                  "a host's cores are too few); with core, more ranks than a host's cores is "
                  "refused unless :overload-allowed follows")
      ->check(CLI::IsMember({"none", "core", "hwthread", "socket", "core:overload-allowed",
                             "hwthread:overload-allowed", "socket:overload-allowed"}));
  command
      .add_option("-c,--cpus-per-rank,--cpus-per-proc", options.cpus_per_rank,
                  "Give each rank K cores (--map-by ...:pe=K): it uses K slots, is bound to K "
                  "cores and gets OMP_NUM_THREADS=K unless that is set")
      ->type_name("K")
      ->check(CLI::Range(1u, 4096u));
  command
      .add_option("--rank-by", options.rank_by,
                  "Number ranks by slot (each daemon's contiguous) or node (round robin over "
                  "the daemons); default: as --map-by placed them")
      ->check(CLI::IsMember({"slot", "node", "core"}));
}

void add_run_options(CLI::App& command, RunOptions& options) {
  add_mapping_options(command, options);
  add_output_options(command, options.output);
  command.add_option("--timeout", options.timeout_s, "Kill the job after S seconds")
      ->type_name("S");
  add_environment_options(command, options);
  command.add_flag("--verbose-to-terminal", options.verbose_to_terminal,
                   "The log of the DVM started for this job (verbose lines, errors) comes to "
                   "this terminal too");
  add_binding_options(command, options);
  auto* host_option =
      command.add_option("-H,--host", options.hosts,
                         "Run on these hosts, HOST[:SLOTS],...: the hosts of the DVM started "
                         "for this job, or those of the running DVM's to use");
  command
      .add_option("--hostfile", options.hostfile,
                  "File of hosts ('host [slots=N]' per line), as -H")
      ->type_name("FILE");
  command.add_flag("--report-bindings", options.report_bindings,
                   "Each rank's daemon says where it is bound (on the rank's stderr)");
  command
      .add_option("--mpi", options.mpi,
                  "What the ranks are offered to start with (srun's spelling): auto (PMIx and "
                  "PMI-1/PMI-2 at once: Open MPI and MPICH both run), pmix, pmi1 or pmi2")
      ->check(CLI::IsMember({"auto", "pmix", "pmi1", "pmi2"}));
  command.add_flag("--display-map", options.display_map,
                   "Print which daemon runs which ranks before the job's output");
  command
      .add_option("--stdin", options.stdin_target,
                  "Which ranks read this command's stdin: a rank, all or none (the others "
                  "read /dev/null)")
      ->check([](const std::string& text) {
        if (text == "all" || text == "none") return std::string();
        auto rank = parse_int(text);
        return rank && *rank >= 0 ? std::string()
                                  : "--stdin " + text + ": expected a rank, all or none";
      })
      ->capture_default_str();
  add_dvm_option(command, options.dvm);
  command
      .add_option("--daemons", options.daemons,
                  "Daemons of the DVM started for this job when none is running")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str()
      ->excludes(host_option)
      ->excludes("--hostfile");
}

}  // namespace grove
