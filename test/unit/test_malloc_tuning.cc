// daemon_malloc_top_pad: with a pad, the heap keeps its top after a fence's
// worth of buffers is freed, instead of giving it back to be faulted in again,
// and large release buffers come from the heap rather than from mmap.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "os/malloc_tuning.h"

#if defined(__SANITIZE_ADDRESS__)
#define GROVE_OWN_ALLOCATOR 1  // ASan's allocator stands in for glibc's
#endif

namespace {
#ifndef GROVE_OWN_ALLOCATOR

struct Churn {
  std::size_t kept = 0;        // the heap top's free bytes after the frees (keepcost)
  std::size_t mmapped_mb = 0;  // bytes of a 1 MiB block that came from mmap
};

// In a child process (the allocator's settings are process-wide): 4 MiB of
// 64 KiB blocks allocated, touched and freed, then one 1 MiB block. pad 0
// runs under glibc's defaults, set explicitly: the test runner's own
// allocations may have moved glibc's dynamic thresholds.
Churn churn(std::uint64_t pad) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    if (pad == 0) {
      mallopt(M_MMAP_THRESHOLD, 128 * 1024);
      mallopt(M_TRIM_THRESHOLD, 128 * 1024);
      // The runner's earlier tests may have left free chunks of 1 MiB or
      // more inside the heap, which malloc serves before it maps: hold
      // them until a 1 MiB block is mapped, so the heap is as a fresh
      // process's.
      std::vector<void*> holes;
      for (int i = 0; i < 4096; ++i) {
        const std::size_t mapped = mallinfo2().hblkhd;
        void* block = std::malloc(1024 * 1024);
        if (mallinfo2().hblkhd > mapped) {
          std::free(block);
          break;
        }
        holes.push_back(block);
      }
    } else if (!grove::keep_freed_memory(pad)) {
      _exit(2);
    }
    std::vector<void*> blocks;
    for (int i = 0; i < 64; ++i) {
      blocks.push_back(std::malloc(64 * 1024));
      std::memset(blocks.back(), i, 64 * 1024);
    }
    for (auto at = blocks.rbegin(); at != blocks.rend(); ++at)
      std::free(*at);
    Churn result;
    result.kept = mallinfo2().keepcost;
    const std::size_t mapped_before = mallinfo2().hblkhd;
    void* large = std::malloc(1024 * 1024);
    std::memset(large, 1, 1024 * 1024);
    result.mmapped_mb = mallinfo2().hblkhd - mapped_before;
    std::free(large);
    ssize_t wrote = write(fds[1], &result, sizeof result);
    _exit(wrote == sizeof result ? 0 : 3);
  }
  close(fds[1]);
  Churn result;
  ssize_t got = read(fds[0], &result, sizeof result);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  REQUIRE(got == sizeof result);
  return result;
}
#endif

}  // namespace

TEST_CASE("a top pad keeps the heap's freed top mapped and large blocks off mmap", "[malloc]") {
#ifdef GROVE_OWN_ALLOCATOR
  WARN("ASan's allocator has no M_TOP_PAD: checked in the plain build only");
#else
  const Churn defaults = churn(0);
  CHECK(defaults.kept < 1024 * 1024);
  CHECK(defaults.mmapped_mb >= 1024 * 1024);
  const Churn padded = churn(8 * 1024 * 1024);
  CHECK(padded.kept >= 4 * 1024 * 1024);
  CHECK(padded.mmapped_mb == 0);
#endif
}
