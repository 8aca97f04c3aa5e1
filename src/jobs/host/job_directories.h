// The directories a daemon keeps for each job it hosts ranks of: the job's
// own under the daemon's session directory (PMIX_NSDIR, a directory per
// rank in it for PMIX_PROCDIR), and one on tmpfs for Open MPI's
// shared-memory backing files, named unguessably (mkdtemp) since tmpfs is
// shared with every user. Made when the launch arrives, removed when the
// job is forgotten or the daemon ends; what a daemon killed before it could
// remove them left there goes when the next daemon on the host starts.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace grove {

class Log;

class JobDirectories {
 public:
  // `session_dir` empty: no directories at all. `shm_root`: where the
  // shared-memory directories go ("/dev/shm" by default; when it is not a
  // writable directory they go in the job's directory instead).
  JobDirectories(const Log& log, std::string session_dir, std::string shm_root = "/dev/shm");
  ~JobDirectories();  // removes every directory still made
  JobDirectories(const JobDirectories&) = delete;
  JobDirectories& operator=(const JobDirectories&) = delete;

  std::string job(std::uint32_t job) const;
  std::string rank(std::uint32_t job, std::uint32_t rank) const;
  // Open MPI's btl_vader_backing_directory for the job (once made). Distinct
  // per daemon: daemons sharing a host would otherwise name segments alike.
  std::string shared_memory(std::uint32_t job) const;

  void make(std::uint32_t job);
  void make_rank(std::uint32_t job, std::uint32_t rank);
  void remove(std::uint32_t job);

 private:
  const Log& log_;
  std::string session_dir_;
  std::string shm_root_;    // empty: shared memory goes in the job's directory
  std::string shm_prefix_;  // "grove-<uid>-", then the daemon's pid
  std::set<std::uint32_t> made_;
  std::map<std::uint32_t, std::string> shared_memory_;  // by job, as mkdtemp made them
};

}  // namespace grove
