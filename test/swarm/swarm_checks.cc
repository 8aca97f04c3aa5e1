#include "swarm/swarm_checks.h"

#include <regex>
#include <thread>

namespace grove::test {

std::vector<std::string> wait_gone(Swarm& swarm, const std::string& needle,
                                   std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = swarm.find_processes(needle);
    if (left.empty() || std::chrono::steady_clock::now() > deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

std::map<int, std::pair<std::string, std::string>> fence_results(const std::string& out) {
  std::map<int, std::pair<std::string, std::string>> results;
  std::regex line(
      R"(rank (\d+)/\d+: \d+ rounds ok, modex \d+ bytes, digest ([0-9a-f]+), local \d+/\d+ on (\S+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it) {
    results[std::stoi((*it)[1])] = {(*it)[2], (*it)[3]};
  }
  return results;
}

}  // namespace grove::test
