#include "rml/bruck_schedule.h"

#include <algorithm>

namespace grove::bruck {

std::uint32_t rounds(std::uint64_t members) {
  std::uint32_t count = 0;
  while (members > 1 && distance(count) < members)
    ++count;
  return count;
}

std::uint64_t blocks_sent(std::uint32_t round, std::uint64_t members) {
  if (members <= distance(round)) return 0;  // past the last round
  return std::min(distance(round), members - distance(round));
}

std::uint64_t blocks_per_member(std::uint64_t members) {
  std::uint64_t total = 0;
  for (std::uint32_t round = 0; round < rounds(members); ++round)
    total += blocks_sent(round, members);
  return total;
}

}  // namespace grove::bruck
