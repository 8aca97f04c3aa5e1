// Small ordered maps and sets as sorted vectors. An xcast op keeps a handful
// of entries per child (at most the radix), touched on every frame: one
// contiguous block instead of a heap node per entry, same iteration order as
// std::map / std::set. A set's first two keys need no heap block at all.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "util/small_vector.h"

namespace grove {

template <typename Key, typename Value>
class FlatMap {
 public:
  using value_type = std::pair<Key, Value>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  const value_type& back() const { return entries_.back(); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  void reserve(std::size_t count) { entries_.reserve(count); }
  void clear() { entries_.clear(); }

  iterator find(const Key& key) {
    auto at = lower(key);
    return at != entries_.end() && at->first == key ? at : entries_.end();
  }
  const_iterator find(const Key& key) const {
    auto at = lower(key);
    return at != entries_.end() && at->first == key ? at : entries_.end();
  }
  std::size_t count(const Key& key) const { return find(key) == end() ? 0 : 1; }

  // The value for key, default-constructed first if absent (as std::map's []).
  Value& operator[](const Key& key) { return try_emplace(key).first->second; }
  std::pair<iterator, bool> try_emplace(const Key& key, Value value = Value{}) {
    auto at = lower(key);
    if (at != entries_.end() && at->first == key) return {at, false};
    return {entries_.insert(at, value_type{key, std::move(value)}), true};
  }

  // Invalidates every iterator and reference into the map at or after `at`.
  iterator erase(const_iterator at) { return entries_.erase(at); }
  std::size_t erase(const Key& key) {
    auto at = find(key);
    if (at == entries_.end()) return 0;
    entries_.erase(at);
    return 1;
  }

  bool operator==(const FlatMap& other) const { return entries_ == other.entries_; }

  template <typename Predicate>
  friend std::size_t erase_if(FlatMap& map, Predicate predicate) {
    return std::erase_if(map.entries_, predicate);
  }

 private:
  iterator lower(const Key& key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const value_type& entry, const Key& k) { return entry.first < k; });
  }
  const_iterator lower(const Key& key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), key,
                            [](const value_type& entry, const Key& k) { return entry.first < k; });
  }

  std::vector<value_type> entries_;
};

template <typename Key>
class FlatSet {
 public:
  using const_iterator = const Key*;

  const_iterator begin() const { return keys_.begin(); }
  const_iterator end() const { return keys_.end(); }
  bool empty() const { return keys_.empty(); }
  std::size_t size() const { return keys_.size(); }
  void clear() { keys_.clear(); }

  std::size_t count(const Key& key) const {
    return std::binary_search(keys_.begin(), keys_.end(), key) ? 1 : 0;
  }
  bool insert(const Key& key) {
    auto at = std::lower_bound(keys_.begin(), keys_.end(), key);
    if (at != keys_.end() && *at == key) return false;
    keys_.insert(at, key);
    return true;
  }
  std::size_t erase(const Key& key) {
    auto at = std::lower_bound(keys_.begin(), keys_.end(), key);
    if (at == keys_.end() || *at != key) return 0;
    keys_.erase(at);
    return 1;
  }

 private:
  SmallVector<Key, 2> keys_;
};

}  // namespace grove
