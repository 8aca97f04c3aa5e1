#include "os/cpu_binding.h"

#include <dirent.h>
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace grove {
namespace {

// Written once, before any rank is forked; read in children only.
cpu_set_t original_set;
bool bound = false;

// Every thread of the process: a thread created later inherits its creator's
// set, so passes repeat until one finds every thread set (a thread made during
// a pass by one not yet set would otherwise keep the old set).
Status set_every_thread(const cpu_set_t& set) {
  for (int pass = 0; pass < 8; ++pass) {
    DIR* tasks = opendir("/proc/self/task");
    if (tasks == nullptr) return Error{std::string("/proc/self/task: ") + std::strerror(errno)};
    bool changed = false;
    Status status = ok_status();
    while (dirent* entry = readdir(tasks)) {
      if (entry->d_name[0] == '.') continue;
      const pid_t tid = static_cast<pid_t>(std::strtol(entry->d_name, nullptr, 10));
      cpu_set_t now;
      CPU_ZERO(&now);
      // A thread that has ended since the listing is no loss.
      if (sched_getaffinity(tid, sizeof now, &now) == 0 && CPU_EQUAL(&now, &set)) continue;
      if (sched_setaffinity(tid, sizeof set, &set) != 0 && errno != ESRCH) {
        status = Error{"sched_setaffinity of thread " + std::string(entry->d_name) + ": " +
                       std::strerror(errno)};
        break;
      }
      changed = true;
    }
    closedir(tasks);
    if (!status || !changed) return status;
  }
  return ok_status();
}

}  // namespace

Result<int> bind_to_cpu_slot(unsigned slot) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
    return Error{std::string("sched_getaffinity: ") + std::strerror(errno)};
  const int count = CPU_COUNT(&allowed);
  if (count <= 0) return Error{"this process may run on no CPU"};
  int pick = static_cast<int>(slot % static_cast<unsigned>(count));
  int cpu = 0;
  for (; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed) && pick-- == 0) break;
  }
  if (count == 1) return cpu;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (!bound) original_set = allowed;
  // Marked before the threads move: if only some of them do, what they fork
  // must still get the whole set back.
  bound = true;
  if (auto status = set_every_thread(one); !status) {
    (void)set_every_thread(original_set);  // best effort: as it was
    return status.error();
  }
  return cpu;
}

std::string kernel_boot_id() {
  std::ifstream file("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(file, id);
  return id;
}

void restore_cpu_affinity() {
  if (bound) (void)sched_setaffinity(0, sizeof original_set, &original_set);
}

int restore_cpu_affinity_of(pid_t child) {
  if (!bound) return 0;
  return sched_setaffinity(child, sizeof original_set, &original_set) == 0 ? 0 : errno;
}

std::vector<int> given_cpus() {
  cpu_set_t set;
  if (bound) {
    set = original_set;
  } else if (sched_getaffinity(0, sizeof set, &set) != 0) {
    return {};
  }
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

}  // namespace grove
