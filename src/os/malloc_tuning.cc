#include "os/malloc_tuning.h"

#include <malloc.h>

#include <climits>

namespace grove {

bool keep_freed_memory(std::uint64_t bytes) {
  if (bytes == 0) return true;
  // Every release a daemon handles is allocated, copied and freed: at 32
  // daemons with 4 KiB each that is ~130 KiB per copy, several per fence.
  // glibc's default pad (128 KiB, trimmed at twice that) gives the heap's
  // top back after the frees and takes it again on the next fence: brk or
  // mprotect calls and a zeroed page fault per 4 KiB, every fence, in every
  // daemon. Padding keeps the top mapped; untouched pad pages cost nothing.
  const int value = bytes > static_cast<std::uint64_t>(INT_MAX) ? INT_MAX : static_cast<int>(bytes);
  // Setting the pad also fixes glibc's mmap threshold at 128 KiB (it no
  // longer rises with the blocks freed), which would send every larger
  // release buffer to mmap and munmap, a fault per page each time. Blocks up
  // to glibc's largest threshold come from the heap instead.
  constexpr int kLargestMmapThreshold = 32 * 1024 * 1024;
  return mallopt(M_TOP_PAD, value) == 1 && mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) == 1;
}

}  // namespace grove
