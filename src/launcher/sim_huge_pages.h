// Transparent huge pages for big simulations. A million-daemon run touches
// gigabytes at random; with 4 KiB pages nearly every touch missed the TLB
// (docs/simulator.md). glibc backs its heap with huge pages only when told
// at start-up (the glibc.malloc.hugetlb tunable), so `grove sim` re-executes
// itself once with it set.
#pragma once

#include <cstdint>
#include <string>

namespace grove {

// Whether a run of `daemons` should use huge pages: "on", "off", or "auto"
// (from kHugePagesFrom daemons).
bool sim_wants_huge_pages(const std::string& mode, std::uint64_t daemons);
inline constexpr std::uint64_t kHugePagesFrom = 100'000;

// Re-executes this process with the tunable set, unless it is set already,
// the kernel never gives huge pages, or exec fails; returns only then, with
// the reason ("" when the tunable is already in effect).
std::string reexec_with_huge_pages();

// Whether this process started with glibc told to use huge pages.
bool huge_pages_in_effect();

}  // namespace grove
