// The simulator's pending events, earliest first, ties in scheduling order
// (so a run is a pure function of its seed; keys are unique, so any correct
// heap pops the same sequence). The heap orders small keys and
// the bodies stay put in a slab: a heap of whole events moved every body
// (a frame's header and payload handle) log(n) times per pop, which was a
// tenth of a million-daemon run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/clock.h"

namespace grove {

template <typename Body>
class EventQueue {
 public:
  void push(TimeNs at, Body body) {
    std::uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<std::uint32_t>(bodies_.size());
      bodies_.push_back(std::move(body));
    } else {
      slot = free_.back();
      free_.pop_back();
      bodies_[slot] = std::move(body);
    }
    keys_.push_back(Key{at, seq_++, slot});
    sift_up(keys_.size() - 1);
  }

  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }

  // Removes the earliest event; returns its time and body.
  std::pair<TimeNs, Body> pop() {
    const Key key = keys_.front();
    keys_.front() = keys_.back();
    keys_.pop_back();
    if (!keys_.empty()) sift_down(0);
    std::pair<TimeNs, Body> out{key.at, std::move(bodies_[key.slot])};
    bodies_[key.slot] = Body{};  // drop what the moved-from body still holds
    free_.push_back(key.slot);
    return out;
  }

 private:
  struct Key {
    TimeNs at = 0;
    std::uint64_t seq = 0;
    std::uint32_t slot = 0;
  };
  static bool earlier(const Key& a, const Key& b) {
    return a.at != b.at ? a.at < b.at : a.seq < b.seq;
  }
  // A 4-ary heap: half the depth of a binary one, and a node's children
  // share cache lines (a million pending events are 20 levels deep in two).
  static constexpr std::size_t kArity = 4;
  void sift_up(std::size_t index) {
    const Key key = keys_[index];
    while (index > 0) {
      const std::size_t parent = (index - 1) / kArity;
      if (!earlier(key, keys_[parent])) break;
      keys_[index] = keys_[parent];
      index = parent;
    }
    keys_[index] = key;
  }
  void sift_down(std::size_t index) {
    const Key key = keys_[index];
    const std::size_t size = keys_.size();
    while (true) {
      const std::size_t first = index * kArity + 1;
      if (first >= size) break;
      std::size_t best = first;
      const std::size_t end = std::min(first + kArity, size);
      for (std::size_t child = first + 1; child < end; ++child) {
        if (earlier(keys_[child], keys_[best])) best = child;
      }
      if (!earlier(keys_[best], key)) break;
      keys_[index] = keys_[best];
      index = best;
    }
    keys_[index] = key;
  }

  std::vector<Key> keys_;  // a 4-ary min-heap by (at, seq)
  std::vector<Body> bodies_;
  std::vector<std::uint32_t> free_;  // slots of bodies_ to reuse
  std::uint64_t seq_ = 0;
};

}  // namespace grove
