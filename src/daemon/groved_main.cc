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
#include <utility>
#include <vector>

#include "control/session_dir.h"
#include "daemon/daemon_node.h"
#include "daemon/host_info.h"
#include "daemon/versions.h"
#include "os/cpu_binding.h"
#include "os/malloc_tuning.h"
#include "os/process_limits.h"
#include "plm/bootstrap.h"
#include "plm/route_address.h"
#include "plm/slurm_allocation.h"
#include "util/man_page.h"
#include "util/param_sources.h"
#include "util/standard_params.h"

namespace {

// What the command line gives a daemon, beyond the node options themselves.
struct GrovedArgs {
  grove::NodeOptions options;
  std::string controller;
  int bootstrap_fd = -1;
  std::vector<std::pair<std::string, std::string>> mca;
  std::optional<grove::Vpid> vpid_base;
  std::optional<unsigned> cpu_slot;
  CLI::Option* vpid_option = nullptr;
};

void add_groved_options(CLI::App& app, GrovedArgs& args) {
  grove::NodeOptions& options = args.options;
  args.vpid_option = app.add_option("--vpid", options.vpid, "This daemon's vpid");
  app.add_option("--vpid-from-slurm", args.vpid_base,
                 "Started by srun: this daemon's vpid is BASE plus $SLURM_NODEID")
      ->excludes(args.vpid_option);
  app.add_option("--dvm-size", options.dvm_size, "Daemons in the DVM")->required();
  app.add_option("--controller", args.controller, "The controller's host:port")->required();
  app.add_option("--bootstrap-fd", args.bootstrap_fd,
                 "Descriptor carrying the DVM secret and spawn plan (0 over ssh)")
      ->required();
  app.add_option("--session-dir", options.session_dir,
                 "This daemon's session directory (default: one of its own, removed at exit)");
  app.add_option("--topology-xml", options.topology_xml,
                 "This host's hwloc topology, exported by a process on the same host "
                 "(default: discover it)");
  app.add_flag("--join", options.joining,
               "Grown into a running DVM (grove grow): start from the controller's welcome");
  app.add_option("--cpu-slot", args.cpu_slot,
                 "Bind to the N-th CPU this process may run on, round robin (daemons that "
                 "share a host; see daemon_bind_local)");
  options.bind_host = "auto";
  app.add_option("--bind", options.bind_host,
                 "Address to listen on; 'auto' is the one that routes to the controller")
      ->capture_default_str();
  auto& mca = args.mca;
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
}

// The manual page, written from the options (meson installs it).
void print_man_page(const CLI::App& app) {
  const std::string version = grove::version_text("groved");
  std::fputs(grove::man_page_for_app(app,
                                     {"groved", 8, "the grove daemon, one per node of a DVM",
                                      version.substr(0, version.find('\n'))},
                                     "grove(1), grove-mca-params(7)")
                 .c_str(),
             stdout);
}

// Every failure below prints this way and makes groved exit 1.
bool fail(const std::string& message) {
  std::fprintf(stderr, "groved: error: %s\n", message.c_str());
  return false;
}

bool load_daemon_params(grove::ParamRegistry& params, const GrovedArgs& args) {
  grove::ParamInputs inputs;
  if (const char* home = std::getenv("HOME")) inputs.home_directory = home;
  inputs.environment = grove::process_environment();
  inputs.command_line = args.mca;
  if (auto status = grove::load_params(params, inputs); !status) {
    return fail(status.error().message);
  }
  return true;
}

// The vpid is given, or is srun's node number past --vpid-from-slurm's base.
bool resolve_vpid(GrovedArgs& args) {
  if (args.vpid_base) {
    auto vpid = grove::vpid_from_slurm(*args.vpid_base, std::getenv("SLURM_NODEID"));
    if (!vpid) return fail(vpid.error().message);
    args.options.vpid = *vpid;
  } else if (args.vpid_option->count() == 0) {
    return fail("--vpid or --vpid-from-slurm is required");
  }
  return true;
}

// The DVM secret, spawn plan and remote settings, read from the bootstrap
// descriptor, which is then retired.
bool take_bootstrap(GrovedArgs& args) {
  auto bootstrap = grove::read_bootstrap(args.bootstrap_fd);
  if (!bootstrap) return fail("reading the bootstrap: " + bootstrap.error().message);
  // Over ssh this is our standard input: nothing more comes on it. /dev/null
  // takes its place, so no later descriptor becomes fd 0 by accident.
  if (int null = open("/dev/null", O_RDONLY | O_CLOEXEC); null >= 0) {
    dup2(null, args.bootstrap_fd);
    close(null);
  }
  args.options.secret = std::move(bootstrap->secret);
  args.options.plan = std::move(bootstrap->plan);
  args.options.remote = std::move(bootstrap->remote);
  return true;
}

// srun numbers nodes in the allocation's order, as the plan does; a mismatch
// would put ranks meant for one host on another.
bool check_slurm_host(const grove::NodeOptions& options) {
  const std::string& planned = options.plan->daemons[options.vpid].host.name;
  // Slurm's name for this node (the node list's), else the host name.
  const char* node_name = std::getenv("SLURMD_NODENAME");
  const std::string here = node_name != nullptr ? node_name : grove::local_hostname();
  if (planned != here && planned != here.substr(0, here.find('.'))) {
    std::fprintf(stderr,
                 "groved: error: SLURM_NODEID %s makes this daemon vpid %u, planned for host "
                 "'%s', but this host is '%s'\n",
                 std::getenv("SLURM_NODEID"), options.vpid, planned.c_str(), here.c_str());
    return false;
  }
  return true;
}

// The controller's address, the bootstrap, and where this daemon listens.
bool resolve_node_options(GrovedArgs& args) {
  grove::NodeOptions& options = args.options;
  auto endpoint = grove::Endpoint::parse(args.controller);
  if (!endpoint) return fail("--controller '" + args.controller + "': " + endpoint.error().message);
  options.controller = *endpoint;
  if (!take_bootstrap(args)) return false;
  if (options.plan && options.vpid >= options.plan->size()) {
    return fail("vpid " + std::to_string(options.vpid) + " is not in the spawn plan");
  }
  if (args.vpid_base && options.plan && !check_slurm_host(options)) return false;
  if (options.bind_host == "auto") {
    auto address = grove::source_address_toward(options.controller.host);
    if (!address) return fail(address.error().message);
    options.bind_host = *address;
  }
  return true;
}

// A daemon on another host has no DVM directory of the controller's: it makes
// its own and removes it when it leaves. The directory to remove ("" if the
// session directory was given), or nullopt if it could not be made.
std::optional<std::string> make_own_session_dir(grove::NodeOptions& options) {
  if (!options.session_dir.empty()) return std::string();
  auto own = grove::create_own_daemon_directory();
  if (!own) {
    fail(own.error().message);
    return std::nullopt;
  }
  auto made = grove::create_daemon_directory(*own, options.vpid);
  if (!made) {
    fail(made.error().message);
    return std::nullopt;
  }
  options.session_dir = *made;
  return *own;
}

// Started over ssh or srun onto the controller's own machine (namespaces,
// containers), a daemon shares its CPUs with the others as a local one does.
std::optional<unsigned> cpu_slot_for(const grove::ParamRegistry& params,
                                     std::optional<unsigned> cpu_slot, grove::Vpid vpid) {
  if (!cpu_slot && params.get_bool("daemon_bind_local") &&
      !params.get_string("daemon_bind_boot_id").empty() &&
      params.get_string("daemon_bind_boot_id") == grove::kernel_boot_id()) {
    return vpid;
  }
  return cpu_slot;
}

// Binds to the slot's CPU, if any; what happened, for the log ("" if nothing).
std::string bind_to(std::optional<unsigned> cpu_slot) {
  if (!cpu_slot) return "";
  auto cpu = grove::bind_to_cpu_slot(*cpu_slot);
  return cpu ? "bound to CPU " + std::to_string(*cpu) : "not bound: " + cpu.error().message;
}

}  // namespace

int main(int argc, char** argv) {
  grove::ParamRegistry params;
  grove::register_standard_params(params);
  CLI::App app{"groved: a grove daemon. It is started by 'grove start', not by hand.", "groved"};
  app.set_version_flag(
      "--version", [] { return grove::version_text("groved"); },
      "Print groved's version, git revision and library versions, and exit");
  GrovedArgs args;
  add_groved_options(app, args);
  if (argc == 2 && std::string(argv[1]) == "--man-page") {
    print_man_page(app);
    return 0;
  }
  CLI11_PARSE(app, argc, argv);
  grove::raise_open_file_limit();
  if (!load_daemon_params(params, args) || !resolve_vpid(args) || !resolve_node_options(args)) {
    return 1;
  }
  grove::NodeOptions& options = args.options;
  const std::optional<std::string> own_directory = make_own_session_dir(options);
  if (!own_directory) return 1;
  // Before any thread exists: the threads made later (libpmix's) inherit it.
  const std::optional<unsigned> cpu_slot = cpu_slot_for(params, args.cpu_slot, options.vpid);
  const bool padded = grove::keep_freed_memory(params.get_size("daemon_malloc_top_pad"));
  const std::string binding = bind_to(cpu_slot);  // logged once the log exists
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
  if (!own_directory->empty()) (void)grove::remove_tree(*own_directory);
  return code;
}
