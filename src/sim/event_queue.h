// The simulator's pending events, earliest first, ties in scheduling order
// (so a run is a pure function of its seed). The heap orders small keys and
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
    std::push_heap(keys_.begin(), keys_.end(), Later{});
  }

  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  TimeNs next_at() const { return keys_.front().at; }

  // Removes the earliest event; returns its time and body.
  std::pair<TimeNs, Body> pop() {
    std::pop_heap(keys_.begin(), keys_.end(), Later{});
    const Key key = keys_.back();
    keys_.pop_back();
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
  struct Later {
    bool operator()(const Key& a, const Key& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };

  std::vector<Key> keys_;  // a binary heap, earliest on top
  std::vector<Body> bodies_;
  std::vector<std::uint32_t> free_;  // slots of bodies_ to reuse
  std::uint64_t seq_ = 0;
};

}  // namespace grove
