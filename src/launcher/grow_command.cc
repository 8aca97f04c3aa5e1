// grove grow: more daemons join a running DVM started on this host. Each
// takes the next vpid and is usable by the next job; running jobs and their
// fences go on (docs/dvm.md, "Growing a DVM").
#include <cstdio>
#include <memory>

#include "control/control_request.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"

namespace grove {

namespace {

struct GrowOptions {
  std::string selector;
  std::uint32_t local = 0;
};

int grow_dvm(const GrowOptions& options) {
  if (options.local == 0) {
    print_cli_error("name the daemons to add: --local N (daemons on this host)");
    return 1;
  }
  // Each joiner starts, reports and is welcomed; the controller gives up on
  // one after 30 s.
  auto reply = ask_dvm(options.selector, {{"cmd", "grow"}, {"local", options.local}},
                       std::chrono::seconds(60));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  for (const auto& daemon : (*reply)["joined"]) {
    std::printf("grove: daemon %u (%s) joined the DVM\n", daemon["vpid"].get<unsigned>(),
                daemon["host"].get<std::string>().c_str());
  }
  std::printf("grove: %u daemons in the DVM\n", (*reply)["daemons"].get<unsigned>());
  return 0;
}

}  // namespace

void add_grow_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<GrowOptions>();
  CLI::App* command =
      app.add_subcommand("grow", "Add daemons to a running DVM; the next jobs may use them");
  add_param_options(*command, context);
  add_dvm_option(*command, options->selector);
  command
      ->add_option("--local", options->local,
                   "Start this many more daemons on this host (a DVM started with --local)")
      ->check(CLI::Range(1u, kMaxGrowLocal));
  context.actions[command] = [options] { return grow_dvm(*options); };
}

}  // namespace grove
