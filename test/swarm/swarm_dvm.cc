#include "swarm/swarm_dvm.h"

#include <fstream>

namespace grove::test {

std::string grove_bin() {
  return binary_from_env("GROVE_BIN");
}

SwarmDvm::SwarmDvm(Swarm& swarm, const DvmStart& start) : swarm_(swarm), env_(start.env) {
  static int count = 0;
  uri_ = swarm.dir() + "/dvm-" + std::to_string(++count) + ".uri";
  std::vector<std::string> argv = start.wrapper;
  argv.insert(argv.end(), {grove_bin(), "start", "--report-uri", uri_});
  argv.insert(argv.end(), start.args.begin(), start.args.end());
  controller_ = swarm.start(0, argv, environment());
}

SwarmDvm::~SwarmDvm() {
  if (controller_ && controller_->running()) {
    stop();
    controller_->terminate();
  }
}

std::vector<std::string> SwarmDvm::environment() const {
  std::vector<std::string> env = {"TMPDIR=" + swarm_.dir()};
  env.insert(env.end(), env_.begin(), env_.end());
  return env;
}

std::vector<std::string> SwarmDvm::grove_argv(std::vector<std::string> args) {
  std::ifstream file(uri_);
  std::string uri;
  std::getline(file, uri);
  std::vector<std::string> argv = {grove_bin()};
  argv.insert(argv.end(), args.begin(), args.begin() + 1);
  argv.insert(argv.end(), {"--dvm", uri});
  argv.insert(argv.end(), args.begin() + 1, args.end());
  return argv;
}

std::unique_ptr<BackgroundProcess> SwarmDvm::start_grove(std::vector<std::string> args) {
  return swarm_.start(0, grove_argv(std::move(args)), environment());
}

RunResult SwarmDvm::grove(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  RunOptions options;
  options.timeout = timeout;
  options.extra_env = environment();
  return swarm_.run(0, grove_argv(std::move(args)), options);
}

nlohmann::json SwarmDvm::status() {
  auto result = grove({"status", "--json"});
  if (result.exit_code != 0) return nlohmann::json::object();
  return nlohmann::json::parse(result.out);
}

void SwarmDvm::stop() {
  grove({"stop"});
  controller_->wait_exit(std::chrono::seconds(30));
}

}  // namespace grove::test
