#include "util/random_stream.h"

namespace grove {
namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

RandomStream RandomStream::split(std::uint64_t seed, std::string_view subsystem) {
  // FNV-1a of the name, mixed into the seed: a fixed, documented derivation.
  std::uint64_t name = 0xCBF29CE484222325ULL;
  for (char c : subsystem) {
    name ^= static_cast<unsigned char>(c);
    name *= 0x100000001B3ULL;
  }
  std::uint64_t mix = seed ^ name;
  return RandomStream(splitmix64(mix));
}

RandomStream::RandomStream(std::uint64_t seed) {
  for (std::uint64_t& word : state_)
    word = splitmix64(seed);
}

std::uint64_t RandomStream::next() {
  const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
  const std::uint64_t t = state_[1] << 17;
  state_[2] ^= state_[0];
  state_[3] ^= state_[1];
  state_[1] ^= state_[2];
  state_[0] ^= state_[3];
  state_[2] ^= t;
  state_[3] = rotl(state_[3], 45);
  return result;
}

std::uint64_t RandomStream::below(std::uint64_t bound) {
  if (bound == 0) return 0;
  // Lemire: the high word of a 128-bit product, rejecting the few low words
  // that would make some results more likely than others.
  unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
  auto low = static_cast<std::uint64_t>(product);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(next()) * bound;
      low = static_cast<std::uint64_t>(product);
    }
  }
  return static_cast<std::uint64_t>(product >> 64);
}

std::uint64_t RandomStream::uniform(std::uint64_t low, std::uint64_t high) {
  if (high <= low) return low;
  const std::uint64_t span = high - low;
  return low + (span == UINT64_MAX ? next() : below(span + 1));
}

}  // namespace grove
