// grove shrink: daemons leave a running DVM (by host or by vpid). With
// ranks of running jobs on them it is refused, naming the jobs, unless
// --force ends those jobs first; each leaving daemon's vpid becomes a hole
// the trees route around (docs/dvm.md, "Shrinking a DVM").
#include <cstdio>
#include <memory>

#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "util/text.h"

namespace grove {

namespace {

struct ShrinkOptions {
  std::string selector;
  std::string hosts;    // -H a,b
  std::string daemons;  // --daemon 2,3
  bool force = false;
};

Result<std::vector<std::uint32_t>> parse_vpids(const std::string& text) {
  std::vector<std::uint32_t> vpids;
  for (const std::string& word : split(text, ',')) {
    auto vpid = parse_int(trim(word));
    if (!vpid || *vpid < 0 || *vpid > INT64_C(0xFFFFFFFF))
      return Error{"--daemon " + text + ": expected daemon numbers (vpids) like 2,3"};
    vpids.push_back(static_cast<std::uint32_t>(*vpid));
  }
  return vpids;
}

int shrink_dvm(const ShrinkOptions& options) {
  nlohmann::json request{{"cmd", "shrink"}, {"force", options.force}};
  nlohmann::json hosts = nlohmann::json::array();
  for (const std::string& host : split(options.hosts, ',')) {
    if (!trim(host).empty()) hosts.push_back(std::string(trim(host)));
  }
  request["hosts"] = hosts;
  if (!options.daemons.empty()) {
    auto vpids = parse_vpids(options.daemons);
    if (!vpids) {
      print_cli_error(vpids.error().message);
      return 1;
    }
    request["daemons"] = *vpids;
  }
  if (hosts.empty() && !request.contains("daemons")) {
    print_cli_error("name the daemons to remove: --host H[,H...] or --daemon N[,N...]");
    return 1;
  }
  // A forced shrink waits for the jobs it ends: SIGTERM, SIGKILL after 2 s.
  auto reply = ask_dvm(options.selector, request, std::chrono::seconds(120));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  for (const auto& daemon : (*reply)["removed"]) {
    std::printf("grove: daemon %u (%s) left the DVM\n", daemon["vpid"].get<unsigned>(),
                daemon["host"].get<std::string>().c_str());
  }
  for (const auto& daemon : (*reply)["lost"]) {
    std::printf("grove: daemon %u (%s) was lost meanwhile: %s\n", daemon["vpid"].get<unsigned>(),
                daemon["host"].get<std::string>().c_str(),
                daemon["failure"].get<std::string>().c_str());
  }
  std::printf("grove: %u daemons remain\n", (*reply)["daemons"].get<unsigned>());
  return 0;
}

}  // namespace

void add_shrink_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<ShrinkOptions>();
  CLI::App* command = app.add_subcommand(
      "shrink", "Remove daemons from a running DVM (by host or by number); the rest go on");
  add_param_options(*command, context);
  add_dvm_option(*command, options->selector);
  command->add_option("--host,-H", options->hosts,
                      "The hosts whose daemons leave, comma-separated (full or short names)");
  command->add_option("--daemon", options->daemons,
                      "The daemons that leave, by number (vpid, as grove status shows it), "
                      "comma-separated");
  command->add_flag("--force", options->force,
                    "End the jobs with ranks on those daemons first (else the shrink is refused, "
                    "naming them)");
  context.actions[command] = [options] { return shrink_dvm(*options); };
}

}  // namespace grove
