#include "grpcomm/fence_table.h"

#include <algorithm>

namespace grove {

std::uint64_t FenceTable::generation(const std::string& signature) const {
  auto found = generations_.find(signature);
  return found == generations_.end() ? 0 : found->second;
}

std::vector<std::pair<std::string, std::uint64_t>> FenceTable::released_in_scope(
    const std::string& scope) const {
  std::vector<std::pair<std::string, std::uint64_t>> rounds;
  for (auto it = generations_.lower_bound(scope);
       it != generations_.end() && it->first.starts_with(scope); ++it)
    rounds.emplace_back(it->first, it->second);
  return rounds;
}

FenceTracker* FenceTable::open(const FenceKey& key) {
  if (key.generation <= generation(key.signature) || scope_ended(key.signature)) return nullptr;
  return &open_[key];
}

FenceTracker* FenceTable::find(const FenceKey& key) {
  auto found = open_.find(key);
  return found == open_.end() ? nullptr : &found->second;
}

bool FenceTable::release(const FenceKey& key) {
  bool owed = false;
  auto tracker = open_.lower_bound(FenceKey{key.signature, 0});
  while (tracker != open_.end() && tracker->first.signature == key.signature &&
         tracker->first.generation <= key.generation) {
    if (tracker->first == key) {
      owed = tracker->second.local;
    } else if (tracker->second.local) {
      // An older round this daemon contributed to is owed its own release,
      // which is on its way (every release reaches every daemon) but was
      // overtaken: a repair or a parked op can reorder two releases. Closing
      // it here would lose its answer and its data.
      ++tracker;
      continue;
    }
    tracker = open_.erase(tracker);
  }
  // Every daemon records every signature's round, participant or not, so a
  // later contribution joins the next round. An ended scope records nothing.
  if (!scope_ended(key.signature)) {
    std::uint64_t& generation = generations_[key.signature];
    generation = std::max(generation, key.generation);
  }
  return owed;
}

void FenceTable::end_scope(const std::string& scope) {
  if (scope.empty() || retired_set_.count(scope) != 0) return;
  std::erase_if(generations_, [&](const auto& entry) { return entry.first.starts_with(scope); });
  std::erase_if(open_, [&](const auto& entry) { return entry.first.signature.starts_with(scope); });
  retired_.push_back(scope);
  retired_set_.insert(scope);
  if (retired_.size() > kRetiredScopes) {
    retired_set_.erase(retired_.front());
    retired_.erase(retired_.begin());  // at most once per ended scope, over kRetiredScopes
  }
}

bool FenceTable::scope_ended(std::string_view signature) const {
  // Scopes are prefixes; the set is small and bounded, so a scan is cheap
  // next to decoding the frame that asked.
  for (const std::string& scope : retired_set_) {
    if (signature.starts_with(scope)) return true;
  }
  return false;
}

const FenceKey* FenceTable::released_but_open(bool local_too) const {
  for (const auto& [key, tracker] : open_) {
    // A round this daemon contributed to waits for its own release even when
    // a later one overtook it; release() closes it then.
    if (key.generation <= generation(key.signature) && (local_too || !tracker.local)) return &key;
  }
  return nullptr;
}

FenceRounds FenceTable::snapshot() const {
  return FenceRounds{{generations_.begin(), generations_.end()}, retired_};
}

void FenceTable::seed(const FenceRounds& rounds) {
  for (const std::string& scope : rounds.retired)
    end_scope(scope);
  for (const auto& [signature, generation] : rounds.released) {
    if (scope_ended(signature)) continue;
    std::uint64_t& known = generations_[signature];
    known = std::max(known, generation);
  }
}

std::vector<FenceKey> FenceTable::open_keys() const {
  std::vector<FenceKey> keys;
  keys.reserve(open_.size());
  for (const auto& [key, tracker] : open_)
    keys.push_back(key);
  return keys;
}

}  // namespace grove
