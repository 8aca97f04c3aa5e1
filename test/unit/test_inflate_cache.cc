// InflateCache (src/grpcomm/inflate_cache.h): the simulator's engines share
// one inflation of each deflated release instead of making one each.
#include <catch2/catch.hpp>

#include "grpcomm/inflate_cache.h"
#include "grpcomm/messages.h"

using namespace grove;

namespace {

SharedBytes deflated(std::size_t size, std::byte fill) {
  return share_bytes(compress_payload(Bytes(size, fill)));
}

}  // namespace

TEST_CASE("one deflated buffer is inflated once and shared by every receiver", "[grpcomm]") {
  InflateCache cache;
  const SharedBytes wire = deflated(100000, std::byte{7});
  auto first = cache.inflate(wire, 1 << 20);
  auto second = cache.inflate(wire, 1 << 20);
  REQUIRE(first);
  REQUIRE(second);
  CHECK(*first == *second);  // the same buffer, not an equal copy
  CHECK((*first)->size() == 100000);
  CHECK(cache.inflations() == 1);
  // Equal bytes in another buffer are another payload.
  auto other = cache.inflate(deflated(100000, std::byte{7}), 1 << 20);
  REQUIRE(other);
  CHECK(*other != *first);
  CHECK(**other == **first);
  CHECK(cache.inflations() == 2);
}

TEST_CASE("the cache keeps the last few payloads and refuses what inflation refuses", "[grpcomm]") {
  InflateCache cache;
  const SharedBytes oldest = deflated(5000, std::byte{1});
  REQUIRE(cache.inflate(oldest, 1 << 20));
  for (int i = 0; i < 4; ++i)
    REQUIRE(cache.inflate(deflated(5000, std::byte{2}), 1 << 20));
  REQUIRE(cache.inflate(oldest, 1 << 20));  // pushed out by four newer: inflated again
  CHECK(cache.inflations() == 6);
  CHECK_FALSE(cache.inflate(deflated(5000, std::byte{3}), 4999));  // above the limit
  Bytes corrupt = compress_payload(Bytes(5000, std::byte{4}));
  corrupt.back() = std::byte{0x5a};
  corrupt[corrupt.size() / 2] = std::byte{0x00};
  CHECK_FALSE(cache.inflate(share_bytes(std::move(corrupt)), 1 << 20));
  // Without a cache every call inflates a buffer of its own.
  const SharedBytes wire = deflated(5000, std::byte{5});
  auto a = inflate_payload(nullptr, wire, 1 << 20);
  auto b = inflate_payload(nullptr, wire, 1 << 20);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a != *b);
  CHECK(**a == **b);
}
