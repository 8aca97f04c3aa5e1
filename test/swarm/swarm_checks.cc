#include "swarm/swarm_checks.h"

#include <regex>

#include "support/wait.h"

namespace grove::test {

std::vector<std::string> wait_gone(Swarm& swarm, const std::string& needle,
                                   std::chrono::milliseconds timeout) {
  std::vector<std::string> left;
  wait_until(
      [&] {
        left = swarm.find_processes(needle);
        return left.empty();
      },
      timeout, std::chrono::milliseconds(100));
  return left;
}

int pid_on(Swarm& swarm, int host, const std::string& needle) {
  for (const std::string& process : swarm.processes(host)) {
    if (process.find(needle) != std::string::npos)
      return std::stoi(process.substr(0, process.find(' ')));
  }
  return 0;
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
