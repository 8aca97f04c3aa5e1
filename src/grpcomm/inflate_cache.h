// Memoised inflation of deflated broadcast payloads. Inflating is a pure
// function of the deflated bytes, so engines handed the same deflated buffer
// can share one result: the simulator gives every engine one cache (a
// frame's payload is one shared buffer for all its receivers there), which
// turns N inflations and N different copies of a release into one. A daemon
// has none: it sees each payload once, and holding it longer would only
// cost memory.
#pragma once

#include <cstdint>
#include <deque>

#include "rml/frame.h"
#include "util/result.h"

namespace grove {

class InflateCache {
 public:
  // The inflated payload of `wire` (deflated, with its length prefix), the
  // same buffer for the same `wire` while it is among the last few.
  Result<SharedBytes> inflate(const SharedBytes& wire, std::uint64_t max_bytes);
  std::uint64_t inflations() const { return inflations_; }

 private:
  struct Entry {
    SharedBytes wire;  // held, so its address cannot be reused meanwhile
    SharedBytes plain;
  };
  static constexpr std::size_t kKept = 4;  // a few ops in flight at once
  std::deque<Entry> recent_;               // newest last
  std::uint64_t inflations_ = 0;
};

// Inflates `wire` with `cache`, or on its own when there is none.
Result<SharedBytes> inflate_payload(InflateCache* cache, const SharedBytes& wire,
                                    std::uint64_t max_bytes);

}  // namespace grove
