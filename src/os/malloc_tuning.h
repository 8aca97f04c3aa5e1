// How a daemon's allocator keeps memory it frees (docs/dvm.md, "Keeping
// freed memory").
#pragma once

#include <cstdint>

namespace grove {

// Makes glibc grow and trim each heap by `bytes` beyond what it needs
// (M_TOP_PAD), so a daemon does not hand its heap's top back to the kernel
// after every fence and fault it in again on the next, and serve blocks up
// to 32 MiB from the heap (M_MMAP_THRESHOLD). 0 leaves glibc's defaults.
// Returns false when the allocator refused a value.
bool keep_freed_memory(std::uint64_t bytes);

}  // namespace grove
