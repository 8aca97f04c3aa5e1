// The simulator's pending events, earliest first, ties in scheduling order
// (so a run is a pure function of its seed). Simulated time never goes back:
// every event is scheduled at or after the last one popped, which makes a
// radix heap exact here. Events sit in buckets by the highest bit in which
// their time differs from the last popped time; only the lowest non-empty
// bucket is ever split, and a bucket keeps scheduling order, so equal times
// pop first-scheduled first with no sequence number. A binary or 4-ary heap
// missed the cache at every level of every pop at a million daemons (its
// sift-down was a tenth of the run); buckets are read and written in order.
// The bodies stay put in a slab and only 16-byte entries move.
#pragma once

#include <array>
#include <bit>
#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/clock.h"

namespace grove {

template <typename Body>
class EventQueue {
 public:
  // `at` must not be before the last popped event's time.
  void push(TimeNs at, Body body) {
    assert(at >= last_);
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(bodies_.size());
      bodies_.push_back(std::move(body));
    } else {
      slot = free_.back();
      free_.pop_back();
      bodies_[slot] = std::move(body);
    }
    buckets_[bucket_of(at)].push_back(Entry{at, slot});
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // Removes the earliest event; returns its time and body.
  std::pair<TimeNs, Body> pop() {
    assert(size_ > 0);
    if (head_ == buckets_[0].size()) refill();
    const Entry entry = buckets_[0][head_++];
    if (head_ == buckets_[0].size()) {
      buckets_[0].clear();
      head_ = 0;
    }
    --size_;
    std::pair<TimeNs, Body> out{entry.at, std::move(bodies_[entry.slot])};
    bodies_[entry.slot] = Body{};  // drop what the moved-from body still holds
    free_.push_back(entry.slot);
    return out;
  }

 private:
  struct Entry {
    TimeNs at = 0;
    std::uint32_t slot = 0;
  };
  // 0: at == last_; b: the highest differing bit is bit b-1.
  std::size_t bucket_of(TimeNs at) const {
    return at == last_ ? 0 : 64 - static_cast<std::size_t>(std::countl_zero(at ^ last_));
  }
  // Bucket 0 is empty: the lowest non-empty bucket holds the earliest time;
  // it becomes last_ and the bucket's entries spread, in order, below it.
  void refill() {
    buckets_[0].clear();
    head_ = 0;
    std::size_t lowest = 1;
    while (buckets_[lowest].empty())
      ++lowest;
    std::vector<Entry>& split = buckets_[lowest];
    TimeNs earliest = split.front().at;
    for (const Entry& entry : split)
      earliest = std::min(earliest, entry.at);
    last_ = earliest;
    for (const Entry& entry : split)
      buckets_[bucket_of(entry.at)].push_back(entry);  // all land below `lowest`
    split.clear();
  }

  std::array<std::vector<Entry>, 65> buckets_;
  std::size_t head_ = 0;  // bucket 0 pops from the front
  std::size_t size_ = 0;
  TimeNs last_ = 0;
  std::vector<Body> bodies_;
  std::vector<std::uint32_t> free_;  // slots of bodies_ to reuse
};

}  // namespace grove
