#include "jobs/host/rank_spawn.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "os/child_process.h"

namespace grove {
namespace {

// The child's descriptors: 0-2, then the go (3) and exec (4) pipes.
constexpr int kChildGo = 3;
constexpr int kChildExec = 4;
static_assert(kRankPmiFd == kChildExec + 1);

bool executable_file(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> find_grove_exec() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return Error{"cannot find grove-exec: /proc/self/exe: " + error.message()};
  const std::filesystem::path here = self.parent_path();
  const std::string candidates[] = {
      (here / "grove-exec").string(),
      (here.parent_path() / "libexec" / "grove" / "grove-exec").string()};
  for (const std::string& candidate : candidates) {
    if (executable_file(candidate)) return candidate;
  }
  return Error{"cannot start ranks: no grove-exec at " + candidates[0] + " or " + candidates[1] +
               " (it is installed with grove)"};
}

Result<SpawnedRank> spawn_rank(const std::string& helper, const RankSpawn& spawn) {
  if (spawn.argv.empty()) return Error{"no program to start"};
  std::vector<std::string> args{helper, std::to_string(getpid()), spawn.cwd};
  args.insert(args.end(), spawn.argv.begin(), spawn.argv.end());
  ChildSpec child;
  child.mechanism = StartMechanism::spawn;  // never a copy of the daemon's address space
  child.argv = args;
  child.search_path = false;
  child.env = std::span<const std::string>(spawn.env);
  child.fds = {spawn.stdin_fd >= 0 ? ChildFd::copy(STDIN_FILENO, spawn.stdin_fd)
                                   : ChildFd::dev_null(STDIN_FILENO, O_RDONLY),
               ChildFd::copy(STDOUT_FILENO, spawn.stdout_fd),
               ChildFd::copy(STDERR_FILENO, spawn.stderr_fd), ChildFd::copy(kChildGo, spawn.go_fd),
               ChildFd::copy(kChildExec, spawn.exec_fd)};
  if (spawn.pmi_fd >= 0) child.fds.push_back(ChildFd::copy(kRankPmiFd, spawn.pmi_fd));
  // None of the daemon's other descriptors (sockets, other ranks' pipes).
  child.close_from = spawn.pmi_fd >= 0 ? kRankPmiFd + 1 : kRankPmiFd;
  child.group = ProcessGroup::own_group;  // a group of its own: the job's signals
  child.signals = SignalReset::all;
  child.mask = SignalMask::empty;
  // What the daemon changed for itself, put back for the rank; then its own
  // CPUs if it is bound. Set from here, while grove-exec waits for its go.
  child.restore_open_files = true;
  child.restore_cpus = true;
  if (spawn.cpus) child.cpus = std::span<const int>(*spawn.cpus);
  auto started = start_child(child);
  if (!started) return started.error();
  return SpawnedRank{started->pid, started->bind_error};
}

}  // namespace grove
