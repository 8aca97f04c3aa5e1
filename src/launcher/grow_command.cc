// grove grow: more daemons join a running DVM, on this host or over ssh on
// named hosts. Each takes the next vpid (or, on a host whose daemon was
// lost, its old one) and is usable by the next job; running jobs and their
// fences go on (docs/dvm.md, "Growing a DVM").
#include <cstdio>
#include <memory>

#include "control/control_request.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "plm/host_list.h"
#include "plm/slurm_hostlist.h"

namespace grove {

namespace {

struct GrowOptions {
  std::string selector;
  std::uint32_t local = 0;
  std::string hosts;      // --host a,b:4
  std::string hostfile;   // --hostfile FILE
  bool activate = false;  // --activate [NODES]
  std::string nodes;      // a Slurm host list: node[3-4],node7
};

// The request: --local N, --activate [NODES], or the hosts of --hostfile
// then --host.
Result<nlohmann::json> grow_request(const GrowOptions& options) {
  const bool listed = !options.hosts.empty() || !options.hostfile.empty();
  if ((options.local != 0) + listed + options.activate > 1)
    return Error{"--local, --host/--hostfile and --activate exclude each other"};
  if (options.local == 0 && !listed && !options.activate) {
    return Error{
        "name the daemons to add: --host H[,H...] or --hostfile F (a daemon on each host, "
        "over ssh), --activate [NODES] (the unused nodes of the Slurm allocation), or --local N "
        "(daemons on this host)"};
  }
  if (options.activate) {
    nlohmann::json request{{"cmd", "grow"}, {"activate", true}};
    if (!options.nodes.empty()) {
      auto nodes = expand_slurm_hostlist(options.nodes);
      if (!nodes) return Error{"--activate " + options.nodes + ": " + nodes.error().message};
      if (nodes->size() > kMaxGrowHosts)
        return Error{"at most " + std::to_string(kMaxGrowHosts) + " nodes at once"};
      request["nodes"] = *nodes;
    }
    return request;
  }
  if (options.local != 0) return nlohmann::json{{"cmd", "grow"}, {"local", options.local}};
  auto hosts = hosts_from_options(options.hosts, options.hostfile);
  if (!hosts) return hosts.error();
  if (hosts->empty()) return Error{"--host/--hostfile name no host"};
  if (hosts->size() > kMaxGrowHosts)
    return Error{"at most " + std::to_string(kMaxGrowHosts) + " hosts at once"};
  nlohmann::json list = nlohmann::json::array();
  for (const HostEntry& host : *hosts) {
    nlohmann::json entry{{"name", host.name}};
    if (!host.user.empty()) entry["user"] = host.user;
    if (host.slots) entry["slots"] = *host.slots;
    list.push_back(entry);
  }
  return nlohmann::json{{"cmd", "grow"}, {"hosts", list}};
}

int grow_dvm(GrowOptions options, bool activate) {
  options.activate = activate;
  auto request = grow_request(options);
  if (!request) {
    print_cli_error(request.error().message);
    return 1;
  }
  // Each joiner starts, reports and is welcomed; the controller gives up on
  // one after 30 s.
  auto reply = ask_dvm(options.selector, *request, std::chrono::seconds(60));
  if (!reply) {
    print_cli_error(reply.error().message);
    return 1;
  }
  for (const auto& daemon : (*reply)["joined"]) {
    std::printf(
        "grove: daemon %u (%s) %s\n", daemon["vpid"].get<unsigned>(),
        daemon["host"].get<std::string>().c_str(),
        daemon.value("back", false) ? "is back in the DVM at its old vpid" : "joined the DVM");
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
  command->add_option("--host,-H", options->hosts,
                      "Start a daemon on each of these hosts over ssh: host[:slots][,host...] "
                      "(a DVM started on a host list); a host whose daemon was lost gets one "
                      "back at its old vpid");
  command->add_option("--hostfile", options->hostfile,
                      "Start a daemon on each host of this hostfile over ssh");
  command
      ->add_option("--activate", options->nodes,
                   "Inside the Slurm allocation the DVM was started in: start daemons on its "
                   "nodes without one (all, or these: node[3-4],node7), in one srun step")
      ->expected(0, 1);
  context.actions[command] = [options, command] {
    return grow_dvm(*options, command->count("--activate") > 0);
  };
}

}  // namespace grove
