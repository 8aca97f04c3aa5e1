#include "support/cpu_affinity.h"

#include <dirent.h>

#include <fstream>

namespace grove::test {

std::vector<pid_t> threads_of(int pid) {
  std::vector<pid_t> tids;
  DIR* tasks = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (tasks == nullptr) return tids;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') tids.push_back(static_cast<pid_t>(std::stol(entry->d_name)));
  }
  closedir(tasks);
  return tids;
}

cpu_set_t affinity_of(pid_t tid) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(tid, sizeof set, &set) != 0) CPU_ZERO(&set);
  return set;
}

int nth_cpu(const cpu_set_t& set, int n) {
  const int count = CPU_COUNT(&set);
  if (count == 0) return -1;
  n %= count;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set) && n-- == 0) return cpu;
  }
  return -1;
}

std::string own_cpus_allowed_line() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) return line;
  }
  return {};
}

}  // namespace grove::test
