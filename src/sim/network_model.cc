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

void SharedNic::add(TimeNs now, std::uint64_t bytes, std::uint64_t token,
                    const NetworkModel& model) {
  auto lane = std::min_element(lanes_free_ns_.begin(), lanes_free_ns_.end());
  TimeNs copied = std::max(now, *lane) + model.copy_ns;
  *lane = copied;
  Transfer transfer{copied, static_cast<double>(bytes), token};
  auto at = std::find_if(waiting_.begin(), waiting_.end(),
                         [&](const Transfer& t) { return t.ready_ns > copied; });
  waiting_.insert(at, transfer);
}

std::vector<std::uint64_t> SharedNic::advance(TimeNs now, const NetworkModel& model) {
  std::vector<std::uint64_t> done;
  const double bytes_per_ns = model.bandwidth_bytes_per_s / 1e9;
  // Event to event up to `now`: each step serves every sending frame
  // equally until the first of them finishes or a waiting one joins. Every
  // step moves time forward, so this ends.
  for (;;) {
    while (!waiting_.empty() && waiting_.front().ready_ns <= last_ns_) {
      sending_.push_back(waiting_.front());
      waiting_.pop_front();
    }
    for (auto it = sending_.begin(); it != sending_.end();) {
      if (it->bytes_left > 1e-6) {
        ++it;
        continue;
      }
      done.push_back(it->token);
      it = sending_.erase(it);
    }
    if (last_ns_ >= now) break;
    TimeNs step_end = now;
    if (!waiting_.empty()) step_end = std::min(step_end, waiting_.front().ready_ns);
    if (!sending_.empty()) {
      const double share = bytes_per_ns / static_cast<double>(sending_.size());
      step_end = std::min(step_end, last_ns_ + finish_after(share));
      const double served = static_cast<double>(step_end - last_ns_) * share;
      for (Transfer& transfer : sending_)
        transfer.bytes_left -= served;
    }
    last_ns_ = step_end;
  }
  return done;
}

TimeNs SharedNic::finish_after(double share) const {
  double least = sending_.front().bytes_left;
  for (const Transfer& transfer : sending_)
    least = std::min(least, transfer.bytes_left);
  return std::max<TimeNs>(1, static_cast<TimeNs>(std::ceil(least / share)));
}

std::optional<TimeNs> SharedNic::next_event(const NetworkModel& model) const {
  std::optional<TimeNs> next;
  if (!waiting_.empty()) next = std::max(last_ns_, waiting_.front().ready_ns);
  if (!sending_.empty()) {
    const double share = model.bandwidth_bytes_per_s / 1e9 / static_cast<double>(sending_.size());
    const TimeNs finish = last_ns_ + finish_after(share);
    next = next ? std::min(*next, finish) : finish;
  }
  return next;
}

TimeNs LinkClock::arrival(std::uint32_t from, std::uint32_t to, TimeNs earliest) {
  if (from >= last_arrival_ns_.size()) last_arrival_ns_.resize(std::size_t{from} + 1);
  TimeNs& last = last_arrival_ns_[from][to];
  last = std::max(last, earliest);
  return last;
}

}  // namespace grove
