#include "rml/traffic.h"

namespace grove {

TrafficCount Accounting::total() const {
  TrafficCount sum;
  for (const auto& [key, count] : by_key_)
    sum += count;
  return sum;
}

TrafficCount Accounting::of(FrameType type, std::uint16_t tag) const {
  TrafficCount sum;
  for (const auto& [key, count] : by_key_) {
    if (key.type == type && key.tag == tag) sum += count;
  }
  return sum;
}

void Accounting::count_frame(std::span<const std::byte> frame) {
  auto header = decode_frame_header(frame, UINT32_MAX);
  if (header) count(TrafficKey{header->type, header->tag, header->topology}, frame.size());
}

TrafficCount Accounting::of(std::uint16_t tag, TopologyKind topology) const {
  TrafficCount sum;
  for (const auto& [key, count] : by_key_) {
    if (key.tag == tag && key.topology == topology) sum += count;
  }
  return sum;
}

Accounting& Accounting::operator+=(const Accounting& other) {
  for (const auto& [key, count] : other.by_key_)
    by_key_[key] += count;
  return *this;
}

}  // namespace grove
