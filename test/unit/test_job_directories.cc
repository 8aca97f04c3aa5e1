// A job's shared-memory directory lives on tmpfs, which every user can
// write: a name someone else can guess and make first (a directory open to
// all, a symbolic link, a file) must never become a job's. And the litter of
// daemons killed before they could tidy up goes when the next one starts,
// never what is another process's or another user's.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "jobs/host/job_directories.h"
#include "os/litter.h"
#include "support/temp_dir.h"
#include "util/log.h"
#include "util/param_registry.h"
#include "util/standard_params.h"

using namespace grove;
using grove::test::TempDir;

namespace {

// A pid that has ended (its process reaped).
pid_t ended_pid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

const Log& quiet_log() {
  static ParamRegistry params = [] {
    ParamRegistry registry;
    register_standard_params(registry);
    return registry;
  }();
  static Log log("test", params);
  return log;
}

}  // namespace

TEST_CASE("a job's shared-memory directory is made new, private and unguessable",
          "[job_directories]") {
  TempDir session("grove-session"), shm("grove-shm");
  chmod(shm.path().c_str(), 01777);  // like /dev/shm
  const std::string guessable =
      shm.path() + "/grove-" + std::to_string(getuid()) + "-" + std::to_string(getpid()) + "-job-1";
  // Planted first (by nobody, when the test can say so): a directory open to
  // everyone, and a link to elsewhere.
  REQUIRE(mkdir(guessable.c_str(), 0777) == 0);
  chmod(guessable.c_str(), 0777);
  if (geteuid() == 0) REQUIRE(chown(guessable.c_str(), 65534, 65534) == 0);
  std::filesystem::create_symlink(session.path(), guessable + "-link");
  {
    JobDirectories directories(quiet_log(), session.path(), shm.path());
    directories.make(1);
    const std::string made = directories.shared_memory(1);
    CHECK(made != guessable);
    CHECK(made.rfind(guessable + "-", 0) == 0);  // the name, then mkdtemp's part
    struct stat info {};
    REQUIRE(lstat(made.c_str(), &info) == 0);
    CHECK(S_ISDIR(info.st_mode));
    CHECK((info.st_mode & 0777) == 0700);
    CHECK(info.st_uid == getuid());
    // A second job's is another.
    directories.make(2);
    CHECK(directories.shared_memory(2) != made);
    directories.remove(1);
    CHECK_FALSE(std::filesystem::exists(made));
    CHECK(std::filesystem::exists(directories.shared_memory(2)));
  }
  // What was planted is left as it was; the daemon's own are gone.
  CHECK(std::filesystem::is_directory(guessable));
  CHECK(std::filesystem::is_symlink(guessable + "-link"));
  std::size_t ours = 0;
  for (const auto& entry : std::filesystem::directory_iterator(shm.path()))
    ours += entry.path().filename().string().find("-job-2-") != std::string::npos ? 1 : 0;
  CHECK(ours == 0);
}

TEST_CASE("without a shared-memory root a job's segments go in its own directory",
          "[job_directories]") {
  TempDir session("grove-session");
  JobDirectories directories(quiet_log(), session.path(), "/nonexistent-shm-root");
  directories.make(3);
  CHECK(directories.shared_memory(3) == directories.job(3));
  CHECK(std::filesystem::is_directory(directories.job(3)));
}

TEST_CASE("a daemon's start removes the shared-memory litter of ended daemons, and only that",
          "[job_directories]") {
  TempDir session("grove-session"), shm("grove-shm");
  const std::string prefix = shm.path() + "/grove-" + std::to_string(getuid()) + "-";
  const pid_t ended = ended_pid();
  const std::string dead = prefix + std::to_string(ended) + "-job-4-abc123";
  const std::string alive = prefix + std::to_string(getpid()) + "-job-4-def456";
  const std::string dead_file = prefix + std::to_string(ended) + "-job-5-ghi789";
  const std::string dead_link = prefix + std::to_string(ended) + "-job-6-jkl012";
  REQUIRE(mkdir(dead.c_str(), 0700) == 0);
  std::ofstream(dead + "/vader_segment.0") << "old";
  REQUIRE(mkdir(alive.c_str(), 0700) == 0);
  std::ofstream(dead_file) << "not a directory";
  std::filesystem::create_symlink(session.path(), dead_link);
  std::string foreign;
  if (geteuid() == 0) {
    foreign = shm.path() + "/grove-" + std::to_string(getuid()) + "-" + std::to_string(ended) +
              "-job-7-mno345";
    REQUIRE(mkdir(foreign.c_str(), 0700) == 0);
    REQUIRE(chown(foreign.c_str(), 65534, 65534) == 0);
  }
  JobDirectories directories(quiet_log(), session.path(), shm.path());
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK(std::filesystem::is_directory(alive));
  CHECK(std::filesystem::is_regular_file(dead_file));
  CHECK(std::filesystem::is_symlink(dead_link));
  CHECK(std::filesystem::is_directory(session.path()));  // not followed
  if (!foreign.empty()) CHECK(std::filesystem::is_directory(foreign));
}

TEST_CASE("litter is named by an ended pid, exactly", "[job_directories]") {
  TempDir dir("grove-litter");
  const pid_t ended = ended_pid();
  const std::string pid = std::to_string(ended);
  std::ofstream(dir.path() + "/dvm-" + pid + ".log");                       // empty: litter
  std::ofstream(dir.path() + "/dvm-" + std::to_string(getpid()) + ".log");  // alive
  std::ofstream(dir.path() + "/dvm-x" + pid + ".log");                      // not the pattern
  {
    std::ofstream written(dir.path() + "/dvm-" + pid + "-kept.log");
    written << "a log someone wrote to";
  }
  CHECK(remove_litter_of_ended(dir.path(), "dvm-", LitterKind::empty_file) == 1);
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/dvm-" + pid + ".log"));
  CHECK(std::filesystem::exists(dir.path() + "/dvm-" + std::to_string(getpid()) + ".log"));
  CHECK(std::filesystem::exists(dir.path() + "/dvm-x" + pid + ".log"));
  CHECK(std::filesystem::exists(dir.path() + "/dvm-" + pid + "-kept.log"));
  // Directories are not files and files are not directories.
  CHECK(remove_litter_of_ended(dir.path(), "dvm-", LitterKind::directory) == 0);
}
