#include "os/proc_stat.h"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace grove {

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return std::nullopt;
  // "PID (COMM) STATE ...": COMM may hold spaces and parentheses, so the
  // fields are counted from the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close + 1));
  ProcStat out;
  std::string field;
  for (int index = 3; rest >> field; ++index) {
    if (index == 3) out.state = field[0];
    if (index == 4) out.parent = static_cast<pid_t>(std::atoi(field.c_str()));
    if (index == 5) out.group = static_cast<pid_t>(std::atoi(field.c_str()));
    if (index == 22) {
      out.start_ticks = std::strtoull(field.c_str(), nullptr, 10);
      break;
    }
  }
  return out;
}

bool process_running(pid_t pid) {
  if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM)) return false;
  const auto stat = read_proc_stat(pid);
  return !stat || stat->state != 'Z';  // no /proc: kill() has the last word
}

}  // namespace grove
