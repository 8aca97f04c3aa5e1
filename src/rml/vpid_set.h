// A set of daemons as sorted, disjoint, inclusive ranges. Fence participant
// sets are usually one or a few ranges (a job maps onto consecutive daemons),
// so this stays small on the wire and in every daemon's tracker even at ten
// thousand daemons.
#pragma once

#include <cstdint>
#include <vector>

#include "rml/membership.h"
#include "util/wire.h"

namespace grove {

struct VpidRange {
  Vpid first = 0;
  Vpid last = 0;  // inclusive
  bool operator==(const VpidRange&) const = default;

  static constexpr const char* wire_name = "vpid range";
  static auto wire_fields(auto& m) { return std::tie(m.first, m.last); }
};

class VpidSet {
 public:
  VpidSet() = default;
  static VpidSet from_list(std::vector<Vpid> vpids);  // any order, duplicates allowed
  static VpidSet span(Vpid first, Vpid last);
  // Ranges must be sorted, disjoint and non-adjacent-merged is not required;
  // returns false (and leaves the set empty) if they are not sorted and disjoint.
  bool assign_ranges(std::vector<VpidRange> ranges);

  bool contains(Vpid vpid) const;
  std::uint64_t size() const { return size_; }
  bool empty() const { return ranges_.empty(); }
  const std::vector<VpidRange>& ranges() const { return ranges_; }
  void insert(Vpid vpid);

  template <typename Visit>
  void for_each(Visit visit) const {
    for (const VpidRange& range : ranges_) {
      for (std::uint64_t vpid = range.first; vpid <= range.last; ++vpid) {
        visit(static_cast<Vpid>(vpid));
      }
    }
  }

  bool operator==(const VpidSet& other) const { return ranges_ == other.ranges_; }

 private:
  std::vector<VpidRange> ranges_;
  std::uint64_t size_ = 0;
};

// On the wire: its ranges; a decoder refuses ranges that are not sorted and disjoint.
template <>
struct WireCodec<VpidSet> {
  static constexpr std::size_t min_size = 4;
  static void put(WireWriter& writer, const VpidSet& set) { writer.put(set.ranges()); }
  static bool get(WireReader& reader, VpidSet& set) {
    std::vector<VpidRange> ranges;
    return reader.get(ranges) && set.assign_ranges(std::move(ranges));
  }
};

}  // namespace grove
