#include "control/session_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "os/litter.h"
#include "os/proc_stat.h"

namespace grove {

namespace {

constexpr char kOneJobMark[] = "one-job";

Status make_private_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error{"cannot create " + path + ": " + std::strerror(errno)};
  }
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) return Error{"cannot inspect " + path};
  if (!S_ISDIR(info.st_mode)) return Error{path + " exists and is not a directory"};
  if (info.st_uid != getuid()) return Error{path + " belongs to another user"};
  if ((info.st_mode & 077) != 0) {
    return Error{path + " is accessible to other users (mode " +
                 std::to_string(info.st_mode & 0777) + "); refusing to use it"};
  }
  return ok_status();
}

}  // namespace

Result<std::string> session_base() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  base += "/grove-" + std::to_string(getuid());
  auto status = make_private_dir(base);
  if (!status) return status.error();
  return base;
}

namespace {

void remove_stale_dvm_directories(const std::string& base) {
  std::error_code error;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(base, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("dvm-", 0) != 0 || !entry.is_directory(error)) continue;
    char* end = nullptr;
    long pid = std::strtol(name.c_str() + 4, &end, 10);
    if (end == nullptr || *end != '\0' || pid <= 0) continue;
    // A directory whose controller is gone (killed, crashed) is litter: its
    // socket answers nobody and its jobs' files are orphans.
    if (!process_running(static_cast<int>(pid))) stale.push_back(entry.path());
  }
  for (const auto& path : stale)
    (void)remove_tree(path.string());
  // The empty logs of DVMs that ended (a one-shot grove run's, one SIGKILLed)
  // and the directories of daemons on this host that were killed.
  remove_litter_of_ended(base, "dvm-", LitterKind::empty_file);
  remove_litter_of_ended(base, "groved-", LitterKind::directory);
}

}  // namespace

Result<DvmInfo> create_dvm_directory(int controller_pid, bool one_job) {
  auto base = session_base();
  if (!base) return base.error();
  remove_stale_dvm_directories(*base);
  DvmInfo info;
  info.pid = controller_pid;
  info.directory = *base + "/dvm-" + std::to_string(controller_pid);
  info.socket_path = info.directory + "/control.sock";
  if (std::filesystem::exists(info.directory)) {
    // A previous controller with our pid died without cleaning up.
    auto removed = remove_tree(info.directory);
    if (!removed) return removed.error();
  }
  auto status = make_private_dir(info.directory);
  if (!status) return status.error();
  if (one_job) {
    const std::string mark = info.directory + "/" + kOneJobMark;
    const int fd = open(mark.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return Error{"cannot create " + mark + ": " + std::strerror(errno)};
    close(fd);
    info.one_job = true;
  }
  return info;
}

Result<std::string> create_own_daemon_directory() {
  auto base = session_base();
  if (!base) return base.error();
  remove_litter_of_ended(*base, "groved-", LitterKind::directory);
  std::string pattern = *base + "/groved-" + std::to_string(getpid()) + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return Error{"cannot create a directory in " + *base + ": " + std::strerror(errno)};
  }
  return pattern;
}

Result<std::string> create_daemon_directory(const std::string& dvm_directory, unsigned vpid) {
  std::string path = dvm_directory + "/daemon-" + std::to_string(vpid);
  auto status = make_private_dir(path);
  if (!status) return status.error();
  return path;
}

Status remove_tree(const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(path, error);
  if (error) return Error{"cannot remove " + path + ": " + error.message()};
  return ok_status();
}

Status remove_dvm_directory(const DvmInfo& dvm) {
  if (!dvm.socket_path.empty()) ::unlink(dvm.socket_path.c_str());
  return remove_tree(dvm.directory);
}

std::vector<DvmInfo> running_dvms() {
  std::vector<DvmInfo> out;
  auto base = session_base();
  if (!base) return out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(*base, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("dvm-", 0) != 0) continue;
    int pid = std::atoi(name.c_str() + 4);
    DvmInfo info{entry.path().string(), pid, entry.path().string() + "/control.sock", false};
    if (!process_running(pid) || !std::filesystem::exists(info.socket_path)) continue;
    // The mark is written before the socket: read after it, it is never missed.
    info.one_job = std::filesystem::exists(entry.path() / kOneJobMark);
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(),
            [](const DvmInfo& a, const DvmInfo& b) { return a.pid < b.pid; });
  return out;
}

std::vector<DvmInfo> shared_dvms() {
  auto running = running_dvms();
  std::erase_if(running, [](const DvmInfo& info) { return info.one_job; });
  return running;
}

Result<DvmInfo> select_dvm(const std::string& selector) {
  auto running = running_dvms();
  if (!selector.empty()) {
    for (const DvmInfo& info : running) {
      if (std::to_string(info.pid) == selector || info.directory == selector) return info;
    }
    return Error{"no running DVM matches '" + selector + "'"};
  }
  // A DVM someone started outlives its jobs; a one-job DVM is the default
  // only when it is all there is (`grove ps` while `grove run` runs).
  if (std::any_of(running.begin(), running.end(),
                  [](const DvmInfo& info) { return !info.one_job; }))
    std::erase_if(running, [](const DvmInfo& info) { return info.one_job; });
  if (running.empty()) return Error{"no running DVM (start one with 'grove start')"};
  if (running.size() > 1) {
    std::string message =
        std::to_string(running.size()) + " DVMs are running; pick one with --dvm PID:";
    for (const DvmInfo& info : running) {
      message += " " + std::to_string(info.pid) + " (" + info.directory + ")";
    }
    return Error{message};
  }
  return running.front();
}

}  // namespace grove
