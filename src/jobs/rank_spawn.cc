#include "jobs/rank_spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "os/cpu_binding.h"
#include "os/process_limits.h"

namespace grove {
namespace {

// The child's descriptors: 0-2, then the go (3) and exec (4) pipes.
constexpr int kChildGo = 3;
constexpr int kChildExec = 4;
constexpr int kFirstClosed = 5;

// A copy of `fd` numbered above the child's fixed ones, so no dup2 of the
// file actions overwrites a source another one still needs.
int above_fixed(int fd) {
  return fd >= kFirstClosed ? fd : fcntl(fd, F_DUPFD_CLOEXEC, kFirstClosed);
}

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
  // Sources above the fixed numbers; the copies go when this returns.
  struct Held {
    int fd = -1;
    bool owned = false;
    ~Held() {
      if (owned) close(fd);
    }
  } sources[5];
  const int wanted[5] = {spawn.stdin_fd, spawn.stdout_fd, spawn.stderr_fd, spawn.go_fd,
                         spawn.exec_fd};
  for (int i = 0; i < 5; ++i) {
    if (wanted[i] < 0) continue;
    sources[i].fd = above_fixed(wanted[i]);
    sources[i].owned = sources[i].fd != wanted[i];
    if (sources[i].fd < 0) return Error{std::string("fcntl: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (sources[0].fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, sources[0].fd, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, sources[1].fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sources[2].fd, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, sources[3].fd, kChildGo);
  posix_spawn_file_actions_adddup2(&actions, sources[4].fd, kChildExec);
  // None of the daemon's other descriptors (sockets, other ranks' pipes).
  posix_spawn_file_actions_addclosefrom_np(&actions, kFirstClosed);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setpgroup(&attributes, 0);  // a group of its own: the job's signals
  posix_spawnattr_setflags(&attributes,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args{helper, std::to_string(getpid()), spawn.cwd};
  args.insert(args.end(), spawn.argv.begin(), spawn.argv.end());
  std::vector<char*> argv, envp;
  for (std::string& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  for (const std::string& entry : spawn.env)
    envp.push_back(const_cast<char*>(entry.c_str()));  // posix_spawn only reads it
  envp.push_back(nullptr);

  pid_t pid = -1;
  const int failed =
      posix_spawn(&pid, helper.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (failed != 0) return Error{"cannot start " + helper + ": " + std::strerror(failed)};

  SpawnedRank spawned{pid, 0};
  // What the daemon changed for itself, put back for the rank; then its own
  // CPUs if it is bound.
  (void)restore_open_file_limit_of(pid);
  if (spawn.cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : *spawn.cpus) {
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
    }
    if (sched_setaffinity(pid, sizeof set, &set) != 0) spawned.bind_error = errno;
  } else {
    (void)restore_cpu_affinity_of(pid);
  }
  return spawned;
}

}  // namespace grove
