#include "rml/vpid_set.h"

#include <algorithm>

namespace grove {

VpidSet VpidSet::from_list(std::vector<Vpid> vpids) {
  std::sort(vpids.begin(), vpids.end());
  vpids.erase(std::unique(vpids.begin(), vpids.end()), vpids.end());
  VpidSet set;
  for (Vpid vpid : vpids) {
    if (!set.ranges_.empty() && set.ranges_.back().last + 1 == vpid) {
      set.ranges_.back().last = vpid;
    } else {
      set.ranges_.push_back({vpid, vpid});
    }
  }
  set.size_ = vpids.size();
  return set;
}

VpidSet VpidSet::span(Vpid first, Vpid last) {
  VpidSet set;
  if (first <= last) {
    set.ranges_.push_back({first, last});
    set.size_ = std::uint64_t{last} - first + 1;
  }
  return set;
}

bool VpidSet::assign_ranges(std::vector<VpidRange> ranges) {
  ranges_.clear();
  size_ = 0;
  std::uint64_t size = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].first > ranges[i].last) return false;
    if (i > 0 && ranges[i].first <= ranges[i - 1].last) return false;
    size += std::uint64_t{ranges[i].last} - ranges[i].first + 1;
  }
  ranges_ = std::move(ranges);
  size_ = size;
  return true;
}

bool VpidSet::contains(Vpid vpid) const {
  auto found =
      std::upper_bound(ranges_.begin(), ranges_.end(), vpid,
                       [](Vpid value, const VpidRange& range) { return value < range.first; });
  if (found == ranges_.begin()) return false;
  return vpid <= std::prev(found)->last;
}

void VpidSet::insert(Vpid vpid) {
  if (contains(vpid)) return;
  std::vector<Vpid> all;
  for_each([&](Vpid member) { all.push_back(member); });
  all.push_back(vpid);
  *this = from_list(std::move(all));
}

}  // namespace grove
