#include "jobs/job_directories.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "util/log.h"

namespace grove {

JobDirectories::JobDirectories(const Log& log, std::string session_dir, std::string shm_root)
    : log_(log), session_dir_(std::move(session_dir)) {
  // Open MPI maps a segment per rank in the backing directory: on a disk
  // file system every page written goes through the page cache to disk,
  // which is what /dev/shm is there to avoid (mpirun's default too).
  if (!session_dir_.empty() && !shm_root.empty() && access(shm_root.c_str(), W_OK | X_OK) == 0) {
    shm_prefix_ =
        shm_root + "/grove-" + std::to_string(getuid()) + "-" + std::to_string(getpid()) + "-job-";
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
  return shm_prefix_.empty() ? job(job_id) : shm_prefix_ + std::to_string(job_id);
}

void JobDirectories::make(std::uint32_t job_id) {
  if (session_dir_.empty()) return;
  made_.insert(job_id);
  for (const std::string& path : {job(job_id), shared_memory(job_id)}) {
    if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
      log_.verbose("daemon", 1, "cannot make %s: %s", path.c_str(), std::strerror(errno));
    }
  }
}

void JobDirectories::make_rank(std::uint32_t job_id, std::uint32_t rank_id) {
  if (session_dir_.empty()) return;
  mkdir(rank(job_id, rank_id).c_str(), 0700);
}

void JobDirectories::remove(std::uint32_t job_id) {
  made_.erase(job_id);
  if (session_dir_.empty()) return;
  for (const std::string& path : {job(job_id), shared_memory(job_id)}) {
    std::error_code error;
    std::filesystem::remove_all(path, error);
    if (error) {
      log_.verbose("daemon", 1, "cannot remove %s: %s", path.c_str(), error.message().c_str());
    }
  }
}

}  // namespace grove
