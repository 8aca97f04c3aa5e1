// groved: one daemon of a grove DVM, started by the controller (`grove start`)
// or, over ssh, by its parent in the routing tree. The bootstrap (DVM secret,
// spawn plan) arrives on a private descriptor, never on argv.
#include <CLI/CLI.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "control/session_dir.h"
#include "daemon/daemon_node.h"
#include "daemon/host_info.h"
#include "daemon/versions.h"
#include "plm/bootstrap.h"
#include "plm/route_address.h"
#include "plm/slurm_allocation.h"
#include "util/cpu_binding.h"
#include "util/malloc_tuning.h"
#include "util/man_page.h"
#include "util/param_sources.h"
#include "util/process_limits.h"
#include "util/standard_params.h"

int main(int argc, char** argv) {
  grove::ParamRegistry params;
  grove::register_standard_params(params);
  CLI::App app{"groved: a grove daemon. It is started by 'grove start', not by hand.", "groved"};
  app.set_version_flag(
      "--version", [] { return grove::version_text("groved"); },
      "Print groved's version, git revision and library versions, and exit");
  grove::NodeOptions options;
  std::string controller;
  int bootstrap_fd = -1;
  std::vector<std::pair<std::string, std::string>> mca;
  std::optional<grove::Vpid> vpid_base;
  auto* vpid_option = app.add_option("--vpid", options.vpid, "This daemon's vpid");
  app.add_option("--vpid-from-slurm", vpid_base,
                 "Started by srun: this daemon's vpid is BASE plus $SLURM_NODEID")
      ->excludes(vpid_option);
  app.add_option("--dvm-size", options.dvm_size, "Daemons in the DVM")->required();
  app.add_option("--controller", controller, "The controller's host:port")->required();
  app.add_option("--bootstrap-fd", bootstrap_fd,
                 "Descriptor carrying the DVM secret and spawn plan (0 over ssh)")
      ->required();
  app.add_option("--session-dir", options.session_dir,
                 "This daemon's session directory (default: one of its own, removed at exit)");
  app.add_option("--topology-xml", options.topology_xml,
                 "This host's hwloc topology, exported by a process on the same host "
                 "(default: discover it)");
  std::optional<unsigned> cpu_slot;
  app.add_option("--cpu-slot", cpu_slot,
                 "Bind to the N-th CPU this process may run on, round robin (daemons that "
                 "share a host; see daemon_bind_local)");
  options.bind_host = "auto";
  app.add_option("--bind", options.bind_host,
                 "Address to listen on; 'auto' is the one that routes to the controller")
      ->capture_default_str();
  app.add_option(
         "--mca",
         [&mca](const CLI::results_t& results) {
           for (std::size_t i = 0; i + 1 < results.size(); i += 2) {
             mca.emplace_back(results[i], results[i + 1]);
           }
           return true;
         },
         "Parameter NAME VALUE")
      ->type_size(2)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  // The manual page, written from the options above (meson installs it).
  if (argc == 2 && std::string(argv[1]) == "--man-page") {
    const std::string version = grove::version_text("groved");
    std::fputs(grove::man_page_for_app(app,
                                       {"groved", 8, "the grove daemon, one per node of a DVM",
                                        version.substr(0, version.find('\n'))},
                                       "grove(1), grove-mca-params(7)")
                   .c_str(),
               stdout);
    return 0;
  }
  CLI11_PARSE(app, argc, argv);
  grove::raise_open_file_limit();

  grove::ParamInputs inputs;
  if (const char* home = std::getenv("HOME")) inputs.home_directory = home;
  inputs.environment = grove::process_environment();
  inputs.command_line = mca;
  if (auto status = grove::load_params(params, inputs); !status) {
    std::fprintf(stderr, "groved: error: %s\n", status.error().message.c_str());
    return 1;
  }
  if (vpid_base) {
    auto vpid = grove::vpid_from_slurm(*vpid_base, std::getenv("SLURM_NODEID"));
    if (!vpid) {
      std::fprintf(stderr, "groved: error: %s\n", vpid.error().message.c_str());
      return 1;
    }
    options.vpid = *vpid;
  } else if (vpid_option->count() == 0) {
    std::fprintf(stderr, "groved: error: --vpid or --vpid-from-slurm is required\n");
    return 1;
  }
  auto endpoint = grove::Endpoint::parse(controller);
  if (!endpoint) {
    std::fprintf(stderr, "groved: error: --controller '%s': %s\n", controller.c_str(),
                 endpoint.error().message.c_str());
    return 1;
  }
  options.controller = *endpoint;
  auto bootstrap = grove::read_bootstrap(bootstrap_fd);
  if (!bootstrap) {
    std::fprintf(stderr, "groved: error: reading the bootstrap: %s\n",
                 bootstrap.error().message.c_str());
    return 1;
  }
  // Over ssh this is our standard input: nothing more comes on it. /dev/null
  // takes its place, so no later descriptor becomes fd 0 by accident.
  if (int null = open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) {
    dup2(null, bootstrap_fd);
    close(null);
  }
  options.secret = std::move(bootstrap->secret);
  options.plan = std::move(bootstrap->plan);
  options.remote = std::move(bootstrap->remote);
  if (options.plan && options.vpid >= options.plan->size()) {
    std::fprintf(stderr, "groved: error: vpid %u is not in the spawn plan\n", options.vpid);
    return 1;
  }
  if (vpid_base && options.plan) {
    // srun numbers nodes in the allocation's order, as the plan does; a
    // mismatch would put ranks meant for one host on another.
    const std::string& planned = options.plan->daemons[options.vpid].host.name;
    // Slurm's name for this node (the node list's), else the host name.
    const char* node_name = std::getenv("SLURMD_NODENAME");
    const std::string here = node_name != nullptr ? node_name : grove::local_hostname();
    if (planned != here && planned != here.substr(0, here.find('.'))) {
      std::fprintf(stderr,
                   "groved: error: SLURM_NODEID %s makes this daemon vpid %u, planned for host "
                   "'%s', but this host is '%s'\n",
                   std::getenv("SLURM_NODEID"), options.vpid, planned.c_str(), here.c_str());
      return 1;
    }
  }
  if (options.bind_host == "auto") {
    auto address = grove::source_address_toward(options.controller.host);
    if (!address) {
      std::fprintf(stderr, "groved: error: %s\n", address.error().message.c_str());
      return 1;
    }
    options.bind_host = *address;
  }
  // A daemon on another host has no DVM directory of the controller's: it
  // makes its own and removes it when it leaves.
  std::string own_directory;
  if (options.session_dir.empty()) {
    auto own = grove::create_own_daemon_directory();
    if (!own) {
      std::fprintf(stderr, "groved: error: %s\n", own.error().message.c_str());
      return 1;
    }
    own_directory = *own;
    auto made = grove::create_daemon_directory(own_directory, options.vpid);
    if (!made) {
      std::fprintf(stderr, "groved: error: %s\n", made.error().message.c_str());
      return 1;
    }
    options.session_dir = *made;
  }
  // Before any thread exists: the threads made later (libpmix's) inherit it.
  // Started over ssh or srun onto the controller's own machine (namespaces,
  // containers), a daemon shares its CPUs with the others as a local one does.
  if (!cpu_slot && params.get_bool("daemon_bind_local") &&
      !params.get_string("daemon_bind_boot_id").empty() &&
      params.get_string("daemon_bind_boot_id") == grove::kernel_boot_id()) {
    cpu_slot = options.vpid;
  }
  const bool padded = grove::keep_freed_memory(params.get_size("daemon_malloc_top_pad"));
  std::string binding;  // logged once the log exists
  if (cpu_slot) {
    auto cpu = grove::bind_to_cpu_slot(*cpu_slot);
    binding = cpu ? "bound to CPU " + std::to_string(*cpu) : "not bound: " + cpu.error().message;
  }
  grove::Log log("groved vpid " + std::to_string(options.vpid) + " " + grove::local_hostname() +
                     ":" + std::to_string(getpid()),
                 params);
  if (!binding.empty()) log.verbose("daemon", 1, "%s", binding.c_str());
  if (!padded) log.verbose("daemon", 1, "the allocator refused daemon_malloc_top_pad");
  int code = 0;
  {
    grove::DaemonNode node(params, log, std::move(options));
    code = node.run();
  }
  if (!own_directory.empty()) (void)grove::remove_tree(own_directory);
  return code;
}
