#include "os/memory_use.h"

#include <malloc.h>
#include <unistd.h>

#include <sstream>

#include "os/proc_files.h"

namespace grove {

MemoryUse current_memory_use() {
  MemoryUse use;
  // Walks every arena under its lock: a status request's cost, never a fence's.
  const struct mallinfo2 info = mallinfo2();
  use.heap_bytes = info.uordblks + info.hblkhd;
  std::istringstream statm(read_whole_file("/proc/self/statm"));
  std::uint64_t size = 0, resident = 0;
  if (statm >> size >> resident) {
    use.resident_bytes = resident * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  }
  return use;
}

}  // namespace grove
