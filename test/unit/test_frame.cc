#include <catch2/catch.hpp>

#include "rml/frame.h"

using namespace grove;

namespace {

FrameHeader sample_header() {
  FrameHeader header;
  header.type = FrameType::xcast_data;
  header.flags = kFrameCompressed;
  header.tag = 31;
  header.topology = TopologyKind::release;
  header.radix = 4;
  header.op_id = 0x0102030405060708ULL;
  header.origin = 0;
  header.destination = 9;
  header.sender = 3;
  header.tree_version = 7;
  header.epoch = 5;
  header.watermark = 2;
  return header;
}

std::vector<std::byte> bytes(std::string_view text) {
  std::vector<std::byte> out;
  for (char c : text)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

}  // namespace

TEST_CASE("frames round-trip every header field", "[frame]") {
  auto payload = bytes("hello release");
  auto frame = encode_frame(sample_header(), payload);
  REQUIRE(frame.size() == kFrameHeaderSize + payload.size());
  auto view = decode_frame(frame, 1 << 20);
  REQUIRE(view);
  const FrameHeader& h = view->header;
  CHECK(h.type == FrameType::xcast_data);
  CHECK(h.flags == kFrameCompressed);
  CHECK(h.tag == 31);
  CHECK(h.topology == TopologyKind::release);
  CHECK(h.radix == 4);
  CHECK(h.op_id == 0x0102030405060708ULL);
  CHECK(h.destination == 9);
  CHECK(h.sender == 3);
  CHECK(h.tree_version == 7);
  CHECK(h.epoch == 5);
  CHECK(h.watermark == 2);
  CHECK(h.payload_length == payload.size());
  CHECK(std::equal(view->payload.begin(), view->payload.end(), payload.begin(), payload.end()));

  set_frame_sender(frame, 0xABCDEF01);
  CHECK(decode_frame(frame, 1 << 20)->header.sender == 0xABCDEF01);
}

TEST_CASE("bad frames are errors with a reason", "[frame]") {
  auto good = encode_frame(sample_header(), bytes("abc"));
  auto reason = [](std::vector<std::byte> frame, std::uint64_t max = 1 << 20) {
    auto view = decode_frame(frame, max);
    REQUIRE_FALSE(view);
    return view.error().message;
  };
  CHECK_THAT(reason({good.begin(), good.begin() + 10}), Catch::Contains("short frame"));
  auto bad_magic = good;
  bad_magic[0] = std::byte{0};
  CHECK_THAT(reason(bad_magic), Catch::Contains("magic"));
  auto bad_version = good;
  bad_version[4] = std::byte{9};
  CHECK_THAT(reason(bad_version), Catch::Contains("version"));
  auto bad_type = good;
  bad_type[5] = std::byte{77};
  CHECK_THAT(reason(bad_type), Catch::Contains("frame type"));
  auto bad_topology = good;
  bad_topology[10] = std::byte{9};
  CHECK_THAT(reason(bad_topology), Catch::Contains("topology"));
  auto truncated = good;
  truncated.pop_back();
  CHECK_THAT(reason(truncated), Catch::Contains("inconsistent"));
  CHECK_THAT(reason(good, 2), Catch::Contains("oversized"));
}

TEST_CASE("stream splitting waits for a header, then knows the length", "[frame]") {
  auto frame = encode_frame(sample_header(), bytes("0123456789"));
  auto partial = frame_length(std::span(frame).first(20), 1 << 20);
  REQUIRE(partial);
  CHECK_FALSE(partial->has_value());
  auto whole = frame_length(frame, 1 << 20);
  REQUIRE(whole);
  CHECK(**whole == frame.size());
  std::vector<std::byte> garbage(kFrameHeaderSize, std::byte{0x41});
  CHECK_FALSE(frame_length(garbage, 1 << 20));
}
