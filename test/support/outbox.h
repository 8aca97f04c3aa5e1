// What a state machine put in its outbox, for tests that script its inputs:
// every outbox is a vector of effect variants (grpcomm's, roster's, stop's,
// the PMIx books', ...), and a test asks for the effects of one type.
#pragma once

#include <cstddef>
#include <variant>
#include <vector>

namespace grove::test {

// The effects of type T, in order, copied (the outbox is often a temporary).
template <typename T, typename Outbox>
std::vector<T> effects_of(const Outbox& out) {
  std::vector<T> found;
  for (const auto& effect : out) {
    if (const T* typed = std::get_if<T>(&effect)) found.push_back(*typed);
  }
  return found;
}

template <typename T, typename Outbox>
std::size_t count_of(const Outbox& out) {
  std::size_t count = 0;
  for (const auto& effect : out)
    count += std::holds_alternative<T>(effect) ? 1 : 0;
  return count;
}

}  // namespace grove::test
