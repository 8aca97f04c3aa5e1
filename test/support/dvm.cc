#include "support/dvm.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace grove::test {

std::string grove_binary() {
  return binary_from_env("GROVE_BIN");
}

namespace {

DvmPlace this_host(const std::string& tmpdir) {
  DvmPlace place;
  place.tmpdir = tmpdir;
  place.start = [](const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    return std::make_unique<BackgroundProcess>(argv, env);
  };
  place.run = [](const std::vector<std::string>& argv, const RunOptions& options) {
    return run_program(argv, options);
  };
  return place;
}

}  // namespace

Dvm::Dvm(int daemons, const std::vector<std::string>& extra_args,
         const std::vector<std::string>& extra_env, const TempDir* shared_tmpdir) {
  if (shared_tmpdir == nullptr) {
    owned_tmpdir_ = std::make_unique<TempDir>();
    shared_tmpdir = owned_tmpdir_.get();
  }
  place_ = this_host(shared_tmpdir->path());
  DvmStart start;
  start.args = {"--local", std::to_string(daemons)};
  start.args.insert(start.args.end(), extra_args.begin(), extra_args.end());
  uri_file_ = place_.tmpdir + "/dvm-" + std::to_string(controller_count()) + ".uri";
  std::vector<std::string> env = extra_env;
  env.push_back("TMPDIR=" + place_.tmpdir);
  controller_ = place_.start(start_argv(start), env);
  ready();
}

Dvm::Dvm(DvmPlace place, const DvmStart& start) : place_(std::move(place)), env_(start.env) {
  uri_file_ = place_.tmpdir + "/dvm-" + std::to_string(controller_count()) + ".uri";
  controller_ = place_.start(start_argv(start), command_env());
}

Dvm::~Dvm() {
  // `grove stop` only for a DVM that came up: one that did not would keep
  // the command waiting for nothing.
  controller_->err();  // reads what has arrived
  if (!stopped_ && controller_->running() && controller_->wait_for("DVM ready", {})) stop();
  controller_->terminate();
}

int Dvm::controller_count() {
  static int count = 0;  // URI files of DVMs sharing a TMPDIR stay apart
  return ++count;
}

std::vector<std::string> Dvm::start_argv(const DvmStart& start) const {
  std::vector<std::string> argv = start.wrapper;
  argv.insert(argv.end(), {grove_binary(), "start", "--report-uri", uri_file_});
  argv.insert(argv.end(), start.args.begin(), start.args.end());
  return argv;
}

bool Dvm::ready(std::chrono::milliseconds timeout) {
  return controller_->wait_for("DVM ready", timeout);
}

std::vector<std::string> Dvm::command_env() const {
  std::vector<std::string> env = {"TMPDIR=" + place_.tmpdir};
  env.insert(env.end(), env_.begin(), env_.end());
  return env;
}

std::vector<std::string> Dvm::grove_argv(std::vector<std::string> args) const {
  std::ifstream file(uri_file_);
  std::string uri;
  std::getline(file, uri);
  std::vector<std::string> argv = {grove_binary()};
  if (!args.empty()) {
    argv.push_back(args.front());
    argv.insert(argv.end(), {"--dvm", uri});
    argv.insert(argv.end(), args.begin() + 1, args.end());
  }
  return argv;
}

RunResult Dvm::grove(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  RunOptions options;
  options.extra_env = command_env();
  options.timeout = timeout;
  return place_.run(grove_argv(std::move(args)), options);
}

std::unique_ptr<BackgroundProcess> Dvm::start_grove(std::vector<std::string> args) {
  return place_.start(grove_argv(std::move(args)), command_env());
}

nlohmann::json Dvm::status() {
  auto result = grove({"status", "--json"});
  if (result.exit_code != 0) throw std::runtime_error("grove status failed: " + result.err);
  return nlohmann::json::parse(result.out);
}

std::string Dvm::daemon_state(unsigned vpid) {
  const nlohmann::json daemons = status()["daemons"];
  for (const auto& daemon : daemons) {
    if (daemon["vpid"] == vpid) return daemon["state"];
  }
  return "absent";
}

nlohmann::json Dvm::bench(const std::string& kind, const std::string& size, int count) {
  auto result = grove({"bench", kind, "--size", size, "--count", std::to_string(count), "--json"},
                      std::chrono::seconds(120));
  if (result.exit_code != 0) throw std::runtime_error("grove bench failed: " + result.err);
  return nlohmann::json::parse(result.out);
}

RunResult Dvm::stop() {
  stopped_ = true;
  auto result = grove({"stop"}, std::chrono::seconds(60));
  const int exit_code = controller_->wait_exit(std::chrono::seconds(30));
  if (result.exit_code != 0 || exit_code != 0) {
    // A failed stop is rare and load-dependent: say what grove stop heard
    // and whether the controller hung or died, for the test log.
    std::fprintf(stderr, "grove stop: exit %d: %s%s\ncontroller %s (exit %d); its log:\n%s\n",
                 result.exit_code, result.out.c_str(), result.err.c_str(),
                 controller_->running() ? "still running" : "ended", exit_code,
                 controller_->err().c_str());
  }
  return result;
}

}  // namespace grove::test
