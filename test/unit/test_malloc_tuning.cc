// daemon_malloc_top_pad: with a pad, the heap keeps its top after a fence's
// worth of buffers is freed, instead of giving it back to be faulted in again.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/malloc_tuning.h"

#if defined(__SANITIZE_ADDRESS__)
#define GROVE_OWN_ALLOCATOR 1  // ASan's allocator stands in for glibc's
#endif

namespace {

// Bytes the heap's top keeps (mallinfo2's keepcost) after 4 MiB of 64 KiB
// blocks are allocated, touched and freed, in a child process: the
// allocator's settings are process-wide.
std::size_t kept_after_churn(std::uint64_t pad) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (!grove::keep_freed_memory(pad)) _exit(2);
    std::vector<void*> blocks;
    for (int i = 0; i < 64; ++i) {
      blocks.push_back(std::malloc(64 * 1024));
      std::memset(blocks.back(), i, 64 * 1024);
    }
    for (auto at = blocks.rbegin(); at != blocks.rend(); ++at)
      std::free(*at);
    const std::size_t kept = mallinfo2().keepcost;
    ssize_t wrote = write(fds[1], &kept, sizeof kept);
    _exit(wrote == sizeof kept ? 0 : 3);
  }
  close(fds[1]);
  std::size_t kept = 0;
  ssize_t got = read(fds[0], &kept, sizeof kept);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == sizeof kept);
  return kept;
}

}  // namespace

TEST_CASE("a top pad keeps the heap's freed top mapped; glibc's default gives it back",
          "[malloc]") {
#ifdef GROVE_OWN_ALLOCATOR
  WARN("ASan's allocator has no M_TOP_PAD: checked in the plain build only");
#else
  CHECK(kept_after_churn(0) < 1024 * 1024);
  CHECK(kept_after_churn(8 * 1024 * 1024) >= 4 * 1024 * 1024);
#endif
}
