#include "launcher/cli_context.h"

#include <cstdio>
#include <cstdlib>

namespace grove {

void add_param_options(CLI::App& app, CliContext& context) {
  app.add_option(
         "--mca,--prtemca",
         [&context](const CLI::results_t& results) {
           for (std::size_t i = 0; i + 1 < results.size(); i += 2) {
             context.mca_pairs.emplace_back(results[i], results[i + 1]);
           }
           return true;
         },
         "Set parameter NAME to VALUE (repeatable; --prtemca is a synonym)")
      ->type_size(2)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME VALUE");
  app.add_option(
         "--param-file",
         [&context](const CLI::results_t& results) {
           for (const auto& path : results)
             context.param_files.push_back(path);
           return true;
         },
         "Read parameters from FILE ('name = value' lines)")
      ->type_name("FILE")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

bool load_cli_params(CliContext& context) {
  ParamInputs inputs;
  if (const char* home = std::getenv("HOME"); home != nullptr) inputs.home_directory = home;
  inputs.param_files = context.param_files;
  inputs.environment = process_environment();
  for (const auto& pair : context.mca_pairs) {
    const bool foreign = context.params.find(pair.first) == nullptr &&
                         context.params.closest_name(pair.first).empty();
    if (context.forward_foreign_mca && foreign) {
      context.foreign_mca.push_back(pair);
    } else {
      inputs.command_line.push_back(pair);
    }
  }
  auto status = load_params(context.params, inputs);
  if (!status) {
    print_cli_error(status.error().message);
    return false;
  }
  return true;
}

void print_cli_error(const std::string& message) {
  std::fprintf(stderr, "grove: error: %s\n", message.c_str());
}

}  // namespace grove
