// groved: one daemon of a grove DVM, started by the controller (`grove start`).
// The DVM secret arrives on an inherited file descriptor, never on argv.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>

#include "daemon/daemon_node.h"
#include "daemon/host_info.h"
#include "rml/transport/dvm_secret.h"
#include "util/param_sources.h"
#include "util/standard_params.h"

int main(int argc, char** argv) {
  grove::ParamRegistry params;
  grove::register_standard_params(params);
  CLI::App app{"groved: a grove daemon. It is started by 'grove start', not by hand.", "groved"};
  grove::NodeOptions options;
  std::string controller;
  int secret_fd = -1;
  std::vector<std::pair<std::string, std::string>> mca;
  app.add_option("--vpid", options.vpid, "This daemon's vpid")->required();
  app.add_option("--dvm-size", options.dvm_size, "Daemons in the DVM")->required();
  app.add_option("--controller", controller, "The controller's host:port")->required();
  app.add_option("--secret-fd", secret_fd, "Inherited descriptor carrying the DVM secret")
      ->required();
  app.add_option("--session-dir", options.session_dir, "This daemon's session directory");
  app.add_option("--bind", options.bind_host, "Address to listen on")->capture_default_str();
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
  CLI11_PARSE(app, argc, argv);

  grove::ParamInputs inputs;
  if (const char* home = std::getenv("HOME")) inputs.home_directory = home;
  inputs.environment = grove::process_environment();
  inputs.command_line = mca;
  if (auto status = grove::load_params(params, inputs); !status) {
    std::fprintf(stderr, "groved: error: %s\n", status.error().message.c_str());
    return 1;
  }
  auto endpoint = grove::Endpoint::parse(controller);
  if (!endpoint) {
    std::fprintf(stderr, "groved: error: --controller '%s': %s\n", controller.c_str(),
                 endpoint.error().message.c_str());
    return 1;
  }
  options.controller = *endpoint;
  auto secret = grove::read_secret(secret_fd);
  if (!secret) {
    std::fprintf(stderr, "groved: error: reading the DVM secret: %s\n",
                 secret.error().message.c_str());
    return 1;
  }
  close(secret_fd);
  options.secret = std::move(*secret);
  grove::Log log("groved vpid " + std::to_string(options.vpid) + " " + grove::local_hostname() +
                     ":" + std::to_string(getpid()),
                 params);
  grove::DaemonNode node(params, log, std::move(options));
  return node.run();
}
