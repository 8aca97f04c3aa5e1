// Transparent huge pages for big simulations. A million-daemon run touches
// gigabytes at random; with 4 KiB pages nearly every touch missed the TLB
// (docs/simulator.md). glibc backs its heap with huge pages only when told
// at start-up (the glibc.malloc.hugetlb tunable), so `grove sim` re-executes
// itself once with it set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace grove {

// Whether a run of `daemons` should use huge pages: "on", "off", or "auto"
// (from kHugePagesFrom daemons).
bool sim_wants_huge_pages(const std::string& mode, std::uint64_t daemons);
inline constexpr std::uint64_t kHugePagesFrom = 100'000;

// Re-executes this process with the tunable set, unless it is set already
// (or this process is the re-executed one), the kernel never gives huge
// pages, one of `param_files` could not be read again (a pipe), or exec
// fails; returns only then, with the reason ("" when already re-executed).
std::string reexec_with_huge_pages(const std::vector<std::string>& param_files);

// Whether this process started with glibc told to use huge pages.
bool huge_pages_in_effect();

}  // namespace grove
