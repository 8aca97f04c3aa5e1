#include "dvm_harness.h"

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <stdexcept>

#include "support/child_groups.h"
#include "support/process_probe.h"
#include "support/wait.h"

namespace grove::test {

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

std::map<int, std::pair<std::uint64_t, std::string>> fence_client_results(const std::string& out) {
  std::map<int, std::pair<std::uint64_t, std::string>> results;
  std::regex line(R"(rank (\d+)/\d+: \d+ rounds ok, modex (\d+) bytes, digest ([0-9a-f]+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    results[std::stoi((*it)[1])] = {std::stoull((*it)[2]), (*it)[3]};
  }
  return results;
}

}  // namespace grove::test
