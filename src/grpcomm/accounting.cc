#include "grpcomm/accounting.h"

namespace grove {

TrafficCount Accounting::total() const {
  TrafficCount sum;
  for (const auto& [key, count] : by_key_) sum += count;
  return sum;
}

TrafficCount Accounting::of(FrameType type, std::uint16_t tag) const {
  TrafficCount sum;
  for (const auto& [key, count] : by_key_) {
    if (key.type == type && key.tag == tag) sum += count;
  }
  return sum;
}

Accounting& Accounting::operator+=(const Accounting& other) {
  for (const auto& [key, count] : other.by_key_) by_key_[key] += count;
  return *this;
}

}  // namespace grove
