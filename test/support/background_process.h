// A process a test starts and keeps running while it works with it: output
// is collected as it arrives, a test can wait (with a deadline) for a line,
// and the process group is always ended by PID when the handle goes away.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <regex>
#include <string>
#include <vector>

namespace grove::test {

class BackgroundProcess {
 public:
  BackgroundProcess(const std::vector<std::string>& argv,
                    const std::vector<std::string>& extra_env);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Reads what is available; waits until `needle` appears in stdout or stderr,
  // or the deadline passes, or the process exits. Returns whether it appeared.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout);
  // The same for a regular expression searched in stderr.
  bool wait_for_match(const std::regex& pattern, std::chrono::milliseconds timeout);
  // Waits for the process to exit; returns its exit code, or -1 on timeout/signal.
  int wait_exit(std::chrono::milliseconds timeout);
  bool running();
  // SIGTERM, then SIGKILL after `grace`, to the whole process group.
  void terminate(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  const std::string& out() {
    pump(0);
    return out_;
  }
  const std::string& err() {
    pump(0);
    return err_;
  }

 private:
  void pump(int wait_ms);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  bool exited_ = false;
  int status_ = 0;
  std::string out_;
  std::string err_;
};

}  // namespace grove::test
