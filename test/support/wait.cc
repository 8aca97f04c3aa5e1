#include "support/wait.h"

#include <algorithm>
#include <thread>

namespace grove::test {

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    // Never sleep past the deadline: the last look is at it, not after it.
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(poll, deadline - now));
  }
}

}  // namespace grove::test
