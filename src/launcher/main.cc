// grove: the command-line front end of a grove DVM.
#include <cstdio>

#include "daemon/versions.h"
#include "launcher/cli_context.h"
#include "launcher/commands.h"
#include "util/man_page.h"
#include "util/standard_params.h"

int main(int argc, char** argv) {
  grove::CliContext context;
  grove::register_standard_params(context.params);

  CLI::App app{
      "grove: a distributed virtual machine that launches parallel jobs and runs\n"
      "their collectives over a high-radix rollup tree and a low-radix release tree.",
      "grove"};
  app.set_version_flag(
      "--version", [] { return grove::version_text("grove"); },
      "Print grove's version, git revision and library versions, and exit");
  app.require_subcommand(1);
  grove::add_param_options(app, context);
  grove::add_info_command(app, context);
  grove::add_model_command(app, context);
  grove::add_topo_command(app, context);
  grove::add_sim_command(app, context);
  grove::add_dvm_commands(app, context);
  grove::add_run_command(app, context);
  grove::add_job_commands(app, context);
  grove::add_shrink_command(app, context);
  grove::add_grow_command(app, context);
  grove::add_log_command(app, context);
  grove::add_tune_command(app, context);
  app.footer("Run 'grove <command> --help' for a command's options. Parameters: 'grove info'.");

  // Manual pages and completion, written from the commands above (meson
  // installs what these print).
  if (argc == 3 && std::string(argv[1]) == "--man-page") {
    const std::string version = grove::version_text("grove");
    const grove::ManPageHeader header{
        std::string(argv[2]) == "mca-params" ? "grove-mca-params" : "grove",
        std::string(argv[2]) == "mca-params" ? 7 : 1,
        std::string(argv[2]) == "mca-params"
            ? "the runtime parameters of grove"
            : "launch parallel jobs on a distributed virtual machine",
        version.substr(0, version.find('\n'))};
    if (header.section == 7) {
      std::fputs(grove::man_page_for_params(context.params, header).c_str(), stdout);
    } else {
      std::fputs(grove::man_page_for_app(app, header, "groved(8), grove-mca-params(7)").c_str(),
                 stdout);
    }
    return 0;
  }
  if (argc == 3 && std::string(argv[1]) == "--completion" && std::string(argv[2]) == "bash") {
    std::fputs(grove::bash_completion_for_app(app).c_str(), stdout);
    return 0;
  }
  // `grove run`'s options are checked before CLI11 sees them: everything from
  // the program on is the program's, so an unknown option would silently
  // become it.
  std::vector<std::string> args(argv, argv + argc);
  bool run = false;  // the command is `grove run`: its usage errors exit 125
  for (std::size_t at = 1; at < args.size(); ++at) {
    if (args[at] == "-mca" || args[at] == "-prtemca") args[at] = "-" + args[at];  // mpirun's
    if (args[at] == "--mca" || args[at] == "--prtemca") {
      at += 2;
    } else if (args[at] == "--param-file") {
      at += 1;
    } else if (args[at] == "run") {
      run = true;
      auto normal = grove::normalize_run_arguments(*app.get_subcommand("run"), args, at + 1,
                                                   context.run_program);
      if (!normal) {
        std::fprintf(stderr, "%s\n", normal.error().message.c_str());
        return grove::kRunUsageError;
      }
      break;
    } else if (args[at].empty() || args[at][0] != '-') {
      break;
    }
  }
  std::vector<char*> words;
  for (auto& word : args)
    words.push_back(word.data());

  try {
    app.parse(static_cast<int>(words.size()), words.data());
  } catch (const CLI::ParseError& error) {
    // CLI11 reports a mistyped command as "a subcommand is required"; name it instead.
    std::vector<std::string> extras = app.remaining();
    if (app.get_subcommands().empty() && !extras.empty() && extras.front()[0] != '-') {
      grove::show_help(context.help, "help-grove.txt", "unknown-command", {extras.front()});
      return 1;
    }
    const int status = app.exit(error);  // says what was wrong (or prints --help: 0)
    return run && status != 0 ? grove::kRunUsageError : status;
  }
  context.forward_foreign_mca = app.get_subcommand("run")->parsed();
  if (!grove::load_cli_params(context)) return 1;
  for (const CLI::App* command : app.get_subcommands()) {
    auto action = context.actions.find(command);
    if (action != context.actions.end()) return action->second();
  }
  std::fprintf(stderr, "grove: error: no command given (try 'grove --help')\n");
  return 1;
}
