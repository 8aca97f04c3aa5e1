// State shared by every `grove` subcommand: the parameter registry, the
// parameter sources gathered from the command line, and help topics.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "util/param_registry.h"
#include "util/param_sources.h"
#include "util/show_help.h"

namespace grove {

struct CliContext {
  ParamRegistry params;
  std::vector<std::pair<std::string, std::string>> mca_pairs;  // --mca/--prtemca, in order
  std::vector<std::string> param_files;                        // --param-file, in order
  // grove run: an --mca name that is not grove's (nor close to one) is the
  // ranks', passed on as OMPI_MCA_<name> the way mpirun does.
  bool forward_foreign_mca = false;
  std::vector<std::pair<std::string, std::string>> foreign_mca;
  // `grove run ... -- PROGRAM ARGS`: what followed the `--`, taken out of
  // CLI11's sight (it would refuse them as unexpected arguments).
  std::vector<std::string> run_program;
  HelpCatalog help{default_help_dirs()};
  // What each subcommand does once parsing succeeded and parameters loaded.
  std::map<const CLI::App*, std::function<int()>> actions;
};

// Adds --mca/--prtemca NAME VALUE and --param-file FILE to an app or subcommand.
void add_param_options(CLI::App& app, CliContext& context);

// Applies ~/.grove/mca-params.conf, --param-file, GROVE_MCA_*, --mca (in that
// order). On a bad value prints the named error and returns false.
bool load_cli_params(CliContext& context);

// Prints "grove: error: <message>" to stderr.
void print_cli_error(const std::string& message);

}  // namespace grove
