#include "os/process_scan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <string>

#include "os/proc_files.h"

namespace grove {
namespace {

// Whether the NUL-separated `environ` holds `entry` as one of its entries.
bool holds_entry(std::string_view environ, std::string_view entry) {
  std::size_t at = 0;
  while (at < environ.size()) {
    std::size_t end = environ.find('\0', at);
    if (end == std::string_view::npos) end = environ.size();
    if (environ.substr(at, end - at) == entry) return true;
    at = end + 1;
  }
  return false;
}

std::string read_environ(pid_t pid) {
  std::string text;
  const int fd = open(("/proc/" + std::to_string(pid) + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[16384];
  for (;;) {
    const ssize_t got = read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<std::size_t>(got));
  }
  close(fd);
  return text;
}

// The value of `name` in the NUL-separated `environ` (empty if it has none).
std::string value_of(std::string_view environ, std::string_view name) {
  std::size_t at = 0;
  while (at < environ.size()) {
    std::size_t end = environ.find('\0', at);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view item = environ.substr(at, end - at);
    if (item.size() > name.size() && item.substr(0, name.size()) == name &&
        item[name.size()] == '=')
      return std::string(item.substr(name.size() + 1));
    at = end + 1;
  }
  return {};
}

}  // namespace

std::vector<pid_t> processes_with_environment(std::string_view entry) {
  std::vector<pid_t> found;
  for (const ProcessEnvironment& process : processes_with_environment(entry, {}))
    found.push_back(process.pid);
  return found;
}

std::vector<ProcessEnvironment> processes_with_environment(std::string_view entry,
                                                           std::string_view name) {
  std::vector<ProcessEnvironment> found;
  const pid_t self = getpid();
  const uid_t uid = getuid();
  for (const std::string& entry_name : directory_entries("/proc")) {
    pid_t pid = 0;
    auto [end, error] =
        std::from_chars(entry_name.data(), entry_name.data() + entry_name.size(), pid);
    if (error != std::errc() || end != entry_name.data() + entry_name.size() || pid == self)
      continue;
    struct stat owner {};
    if (stat(("/proc/" + entry_name).c_str(), &owner) != 0 || owner.st_uid != uid) continue;
    const std::string environ = read_environ(pid);
    if (holds_entry(environ, entry))
      found.push_back({pid, name.empty() ? std::string() : value_of(environ, name)});
  }
  return found;
}

}  // namespace grove
