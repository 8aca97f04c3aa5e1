// How much memory this process holds, for `grove status`: a daemon of a
// long-lived DVM must not grow per fence or per job (docs/dvm.md).
#pragma once

#include <cstdint>

namespace grove {

struct MemoryUse {
  std::uint64_t heap_bytes = 0;      // handed out by malloc and not freed (every arena)
  std::uint64_t resident_bytes = 0;  // resident set (0 if /proc cannot be read)
};

MemoryUse current_memory_use();

}  // namespace grove
