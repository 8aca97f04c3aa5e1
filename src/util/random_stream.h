// grove's own pseudo-random numbers for the simulators. The standard
// library's engines are portable but its distributions and std::shuffle are
// not (libstdc++ and libc++ draw different streams), so a replay line would
// replay only on the library that wrote it. Here every draw is defined by
// this file: xoshiro256** seeded through splitmix64, Lemire's bounded
// integers, Fisher-Yates. One run seed splits into an independent stream per
// subsystem (jitter, faults, payloads), so adding draws to one does not move
// another's schedule.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace grove {

class RandomStream {
 public:
  // The stream of `subsystem` under the run's seed.
  static RandomStream split(std::uint64_t seed, std::string_view subsystem);
  explicit RandomStream(std::uint64_t seed);

  std::uint64_t next();
  // Uniform in [0, bound); bound 0 gives 0.
  std::uint64_t below(std::uint64_t bound);
  // Uniform in [low, high], both included.
  std::uint64_t uniform(std::uint64_t low, std::uint64_t high);

  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (std::size_t i = items.size(); i > 1; --i)
      std::swap(items[i - 1], items[static_cast<std::size_t>(below(i))]);
  }

 private:
  std::uint64_t state_[4];
};

}  // namespace grove
