// Test-only process and loop helpers shared by the in-process PMIx tests and
// the two-daemon test node: fork/exec with extra environment, reap without
// blocking, kill by PID, and run an event base until a condition or deadline.
#pragma once

#include <event2/event.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "pmix/server.h"
#include "support/temp_dir.h"
#include "util/result.h"

namespace grove::pmix_test {

struct ChildProcess {
  int pid = -1;
  bool exited = false;
  int exit_code = -1;  // valid when exited and signal == 0
  int signal = 0;
};

// Forks and execs argv[0] with this process's environment plus `extra_env`
// ("NAME=value" entries replace variables of the same name). The child's
// stdout and stderr are dup'ed from out_fd and err_fd.
Result<ChildProcess> spawn_child(const std::vector<std::string>& argv,
                                 const std::vector<std::string>& extra_env, int out_fd, int err_fd);

// Reaps the child if it has exited; never blocks. True once it has exited.
bool poll_child(ChildProcess& child);

// SIGKILL by PID, then reap. A no-op for a child already reaped.
void kill_child(ChildProcess& child);

// Kills (by PID) every child still running when it goes out of scope.
class ChildGuard {
 public:
  explicit ChildGuard(std::vector<ChildProcess>& children) : children_(children) {}
  ChildGuard(const ChildGuard&) = delete;
  ChildGuard& operator=(const ChildGuard&) = delete;
  ~ChildGuard() {
    for (ChildProcess& child : children_)
      kill_child(child);
  }

 private:
  std::vector<ChildProcess>& children_;
};

// Runs `base` until done() holds (checked at least every 5 ms) or the
// deadline passes. Returns done().
bool run_loop_until(event_base* base, const std::function<bool()>& done,
                    std::chrono::milliseconds deadline);

// Starts `call` and runs the loop until it has answered (the server's
// registrations answer later, on the loop), or for a minute at most.
Status wait_for_answer(event_base* base, const std::function<void(PmixServer::StatusDone)>& call);
// register_client, answered, then the client's environment.
Result<std::vector<std::string>> register_client_env(event_base* base, PmixServer& server,
                                                     const std::string& nspace, std::uint32_t rank);

using grove::test::TempDir;

std::string read_text_file(const std::string& path);

// The lines of `text` that start with `prefix`.
std::vector<std::string> lines_starting_with(const std::string& text, const std::string& prefix);

}  // namespace grove::pmix_test
