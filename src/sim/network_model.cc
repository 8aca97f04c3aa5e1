#include "sim/network_model.h"

#include <algorithm>
#include <cmath>

namespace grove {

TimeNs DaemonNic::transmit(TimeNs now, std::uint64_t bytes, const NetworkModel& model) {
  auto lane = std::min_element(lanes_free_ns_.begin(), lanes_free_ns_.end());
  TimeNs copied = std::max(now, *lane) + model.copy_ns;
  *lane = copied;
  auto wire_ns = static_cast<TimeNs>(
      std::ceil(static_cast<double>(bytes) * 1e9 / model.bandwidth_bytes_per_s));
  nic_free_ns_ = std::max(copied, nic_free_ns_) + wire_ns;
  return nic_free_ns_;
}

TimeNs LinkClock::arrival(std::uint32_t from, std::uint32_t to, TimeNs earliest) {
  TimeNs& last = last_arrival_ns_[(std::uint64_t{from} << 32) | to];
  last = std::max(last, earliest);
  return last;
}

}  // namespace grove
