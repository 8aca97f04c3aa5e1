// Each `grove` subcommand registers itself on the app: its options, its help,
// and its action in context.actions.
#pragma once

#include "launcher/cli_context.h"

namespace grove {

void add_info_command(CLI::App& app, CliContext& context);
void add_model_command(CLI::App& app, CliContext& context);
void add_topo_command(CLI::App& app, CliContext& context);
void add_sim_command(CLI::App& app, CliContext& context);
void add_dvm_commands(CLI::App& app, CliContext& context);
void add_run_command(CLI::App& app, CliContext& context);

}  // namespace grove
