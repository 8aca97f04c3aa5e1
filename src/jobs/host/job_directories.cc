#include "jobs/host/job_directories.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "os/litter.h"
#include "util/log.h"

namespace grove {

JobDirectories::JobDirectories(const Log& log, std::string session_dir, std::string shm_root)
    : log_(log), session_dir_(std::move(session_dir)) {
  // Open MPI maps a segment per rank in the backing directory: on a disk
  // file system every page written goes through the page cache to disk,
  // which is what /dev/shm is there to avoid (mpirun's default too).
  if (!session_dir_.empty() && !shm_root.empty() && access(shm_root.c_str(), W_OK | X_OK) == 0) {
    shm_root_ = shm_root;
    shm_prefix_ = "grove-" + std::to_string(getuid()) + "-";
    // What daemons killed before they could tidy up left on this host.
    const std::size_t swept = remove_litter_of_ended(shm_root_, shm_prefix_, LitterKind::directory);
    if (swept > 0) {
      log_.verbose("daemon", 1, "removed %zu shared-memory directories of ended daemons from %s",
                   swept, shm_root_.c_str());
    }
  }
}

JobDirectories::~JobDirectories() {
  while (!made_.empty())
    remove(*made_.begin());
}

std::string JobDirectories::job(std::uint32_t job) const {
  return session_dir_ + "/job-" + std::to_string(job);
}

std::string JobDirectories::rank(std::uint32_t job_id, std::uint32_t rank_id) const {
  return job(job_id) + "/" + std::to_string(rank_id);
}

std::string JobDirectories::shared_memory(std::uint32_t job_id) const {
  auto made = shared_memory_.find(job_id);
  return made == shared_memory_.end() ? job(job_id) : made->second;
}

void JobDirectories::make(std::uint32_t job_id) {
  if (session_dir_.empty()) return;
  made_.insert(job_id);
  // The job's own directory is in the daemon's private session directory:
  // nobody else can have made it first.
  if (mkdir(job(job_id).c_str(), 0700) != 0 && errno != EEXIST) {
    log_.verbose("daemon", 1, "cannot make %s: %s", job(job_id).c_str(), std::strerror(errno));
  }
  if (shm_root_.empty() || shared_memory_.count(job_id) != 0) return;
  // /dev/shm is everyone's: a name anyone can guess could be made first
  // (another user's directory, a symbolic link, a file), so the name ends
  // in mkdtemp's random part and the directory is made new, 0700, ours.
  std::string pattern = shm_root_ + "/" + shm_prefix_ + std::to_string(getpid()) + "-job-" +
                        std::to_string(job_id) + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    log_.error("cannot make a shared-memory directory in %s (%s): job %u's go in its directory",
               shm_root_.c_str(), std::strerror(errno), job_id);
    return;
  }
  shared_memory_[job_id] = pattern;
}

void JobDirectories::make_rank(std::uint32_t job_id, std::uint32_t rank_id) {
  if (session_dir_.empty()) return;
  mkdir(rank(job_id, rank_id).c_str(), 0700);
}

void JobDirectories::remove(std::uint32_t job_id) {
  made_.erase(job_id);
  if (session_dir_.empty()) return;
  std::vector<std::string> paths{job(job_id)};
  if (auto shared = shared_memory_.extract(job_id)) paths.push_back(shared.mapped());
  for (const std::string& path : paths) {
    std::error_code error;
    std::filesystem::remove_all(path, error);
    if (error) {
      log_.verbose("daemon", 1, "cannot remove %s: %s", path.c_str(), error.message().c_str());
    }
  }
}

}  // namespace grove
