// The Bruck allgather's schedule over P members (indices 0..P-1 in an agreed
// order): ceil(log2 P) rounds; in round k member i sends to i + 2^k and hears
// from i - 2^k (mod P). Before round k a member holds the blocks of members
// i, i-1, ..., i-2^k+1 and sends them all, except in the last round, where
// only the P - 2^k its receiver still lacks go. After the last round every
// member holds every block. Pure arithmetic: the engine, the cost model and
// the tests share it.
#pragma once

#include <cstdint>

namespace grove::bruck {

// ceil(log2 members): 0 for one member (it holds everything already).
std::uint32_t rounds(std::uint64_t members);

// 2^round, the distance a round's frames travel.
inline std::uint64_t distance(std::uint32_t round) {
  return std::uint64_t{1} << round;
}

// Whom `index` sends to in `round`, and whom it hears from.
inline std::uint64_t send_to(std::uint64_t index, std::uint32_t round, std::uint64_t members) {
  return (index + distance(round) % members) % members;
}
inline std::uint64_t hear_from(std::uint64_t index, std::uint32_t round, std::uint64_t members) {
  return (index + members - distance(round) % members) % members;
}

// How many blocks a member sends in `round`: 2^round, or what is left in the
// last round (min(2^k, P - 2^k)).
std::uint64_t blocks_sent(std::uint32_t round, std::uint64_t members);

// The i-th block (0 = the sender's own) a member sends in a round: the block
// of member `index - offset`.
inline std::uint64_t block_owner(std::uint64_t index, std::uint64_t offset, std::uint64_t members) {
  return (index + members - offset % members) % members;
}

// Blocks each member sends over the whole exchange: P - 1.
std::uint64_t blocks_per_member(std::uint64_t members);

}  // namespace grove::bruck
