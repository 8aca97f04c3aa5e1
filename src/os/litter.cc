#include "os/litter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <filesystem>
#include <system_error>
#include <vector>

#include "os/proc_files.h"
#include "os/proc_stat.h"

namespace grove {

std::size_t remove_litter_of_ended(const std::string& directory, std::string_view prefix,
                                   LitterKind kind) {
  std::vector<std::string> doomed;
  for (const std::string& name : directory_entries(directory)) {
    if (name.size() <= prefix.size() || std::string_view(name).substr(0, prefix.size()) != prefix)
      continue;
    const char* first = name.data() + prefix.size();
    const char* last = name.data() + name.size();
    pid_t pid = 0;
    auto [end, error] = std::from_chars(first, last, pid);
    if (error != std::errc() || pid <= 0) continue;
    if (end != last && std::isdigit(static_cast<unsigned char>(*end))) continue;
    const std::string path = directory + "/" + name;
    struct stat info {};
    if (lstat(path.c_str(), &info) != 0 || info.st_uid != getuid()) continue;
    const bool expected = kind == LitterKind::directory
                              ? S_ISDIR(info.st_mode)
                              : S_ISREG(info.st_mode) && info.st_size == 0;
    if (!expected || process_running(pid)) continue;
    doomed.push_back(path);
  }
  std::size_t removed = 0;
  for (const std::string& path : doomed) {
    std::error_code error;
    if (std::filesystem::remove_all(path, error) > 0 && !error) ++removed;
  }
  return removed;
}

}  // namespace grove
