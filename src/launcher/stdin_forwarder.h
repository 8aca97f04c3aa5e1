// grove run's stdin, passed to its job's reading ranks (--stdin): a thread
// reads it in chunks and hands each to the controller, waiting until the
// ranks' daemons have it in their pipes before reading more, so a rank that
// reads slowly slows the reading here, not memory anywhere. It stops at EOF
// (the ranks' stdin closes), when no rank reads any more, or when asked.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "os/fd.h"

namespace grove {

class StdinForwarder {
 public:
  StdinForwarder() = default;
  // Stops and joins.
  ~StdinForwarder();
  StdinForwarder(const StdinForwarder&) = delete;
  StdinForwarder& operator=(const StdinForwarder&) = delete;

  // Starts forwarding this process's stdin to `job` of the DVM at `socket_path`.
  void start(std::string socket_path, std::uint32_t job);
  // Stops reading (the job is over) and waits for the thread.
  void stop();

  // Whether stdin may be read without being stopped by the terminal: not a
  // terminal, or one whose foreground we are (`grove run ... &` is not).
  static bool readable_here();

 private:
  void forward(const std::string& socket_path, std::uint32_t job);

  Fd stop_read_, stop_write_;
  std::thread thread_;
};

}  // namespace grove
