#include "dvm_harness.h"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <stdexcept>

#include "support/child_groups.h"
#include "support/process_probe.h"
#include "support/wait.h"

namespace grove::test {

std::string grove_binary() {
  return binary_from_env("GROVE_BIN");
}

std::string copy_for_everyone(const std::string& from, const std::string& dir) {
  const std::string to = dir + "/" + std::filesystem::path(from).filename().string();
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  chmod(to.c_str(), 0755);
  return to;
}

pid_t controller_pid_in(const std::string& start_output) {
  const auto at = start_output.find("controller pid ");
  return at == std::string::npos ? 0 : std::stoi(start_output.substr(at + 15));
}

DaemonizedController::DaemonizedController(pid_t pid) : pid_(pid) {
  if (pid_ <= 0) return;
  const auto stat = read_proc_stat(pid_);
  start_ticks_ = stat ? stat->start_ticks : 0;
  track_child_group(pid_);  // its session's id is its group's
}

bool DaemonizedController::still_ours() const {
  const auto stat = read_proc_stat(pid_);
  return stat && stat->start_ticks == start_ticks_ && stat->state != 'Z';
}

DaemonizedController::~DaemonizedController() {
  if (pid_ <= 0) return;
  untrack_child_group(pid_);
  if (!still_ours()) return;
  kill(-pid_, SIGTERM);  // it stops its daemons
  if (!wait_until([this] { return !still_ours(); }, std::chrono::seconds(5)) && still_ours())
    kill(-pid_, SIGKILL);
}

Dvm::Dvm(int daemons, const std::vector<std::string>& extra_args,
         const std::vector<std::string>& extra_env, const TempDir* shared_tmpdir) {
  if (shared_tmpdir == nullptr) {
    owned_tmpdir_ = std::make_unique<TempDir>();
    tmpdir_ = owned_tmpdir_.get();
  } else {
    tmpdir_ = shared_tmpdir;
  }
  std::vector<std::string> argv = {grove_binary(), "start", "--local", std::to_string(daemons)};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::vector<std::string> env = extra_env;
  env.push_back(tmpdir_->env());
  controller_ = std::make_unique<BackgroundProcess>(argv, env);
  ready_ = controller_->wait_for("DVM ready", std::chrono::seconds(60));
}

Dvm::~Dvm() {
  if (ready_ && !stopped_) stop();
  controller_->terminate();
}

RunResult Dvm::grove(std::vector<std::string> args, std::chrono::milliseconds timeout) {
  // --dvm goes right after the subcommand: for `grove run` anything after
  // the program belongs to the program.
  if (controller_->pid() > 0 && !args.empty()) {
    args.insert(args.begin() + 1, {"--dvm", std::to_string(controller_->pid())});
  }
  args.insert(args.begin(), grove_binary());
  RunOptions options;
  options.extra_env = {tmpdir_->env()};
  options.timeout = timeout;
  return run_program(args, options);
}

nlohmann::json Dvm::status() {
  auto result = grove({"status", "--json"});
  if (result.exit_code != 0) {
    throw std::runtime_error("grove status failed: " + result.err);
  }
  return nlohmann::json::parse(result.out);
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
  controller_->wait_exit(std::chrono::seconds(30));
  return result;
}

std::pair<std::uint64_t, std::uint64_t> sum_traffic(const nlohmann::json& table,
                                                    const std::string& type, const std::string& tag,
                                                    const std::string& topology) {
  std::uint64_t frames = 0, bytes = 0;
  for (const auto& entry : table) {
    if (entry["type"] != type || entry["tag"] != tag) continue;
    if (!topology.empty() && entry["topology"] != topology) continue;
    frames += entry["frames"].get<std::uint64_t>();
    bytes += entry["bytes"].get<std::uint64_t>();
  }
  return {frames, bytes};
}

}  // namespace grove::test
