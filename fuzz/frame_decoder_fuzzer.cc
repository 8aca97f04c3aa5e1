// libFuzzer target for the wire frame codec (rml/frame.h): arbitrary bytes go
// to decode_frame_header, decode_frame and frame_length, which must agree with
// each other, and every frame that decodes must re-encode to the same bytes.
// The input is also split as a stream, the way the transport splits a socket.
// Built and run by .ci/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "rml/frame.h"

namespace {

#define FUZZ_CHECK(condition)                                               \
  do {                                                                      \
    if (!(condition)) {                                                     \
      std::fprintf(stderr, "frame fuzzer: check failed: %s\n", #condition); \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

constexpr std::uint64_t kMaxPayload = 4096;

void check_one(std::span<const std::byte> bytes) {
  auto header = grove::decode_frame_header(bytes, kMaxPayload);
  auto length = grove::frame_length(bytes, kMaxPayload);
  auto frame = grove::decode_frame(bytes, kMaxPayload);

  if (bytes.size() < grove::kFrameHeaderSize) {
    FUZZ_CHECK(!header);
    FUZZ_CHECK(length && !length->has_value());
    FUZZ_CHECK(!frame);
    return;
  }
  FUZZ_CHECK(header.ok() == length.ok());
  if (!header) {
    FUZZ_CHECK(!frame);
    return;
  }
  FUZZ_CHECK(header->payload_length <= kMaxPayload);
  FUZZ_CHECK(length->has_value());
  FUZZ_CHECK(**length == grove::kFrameHeaderSize + header->payload_length);
  FUZZ_CHECK(frame.ok() == (bytes.size() == **length));
  if (!frame) return;
  FUZZ_CHECK(frame->payload.size() == header->payload_length);
  auto encoded = grove::encode_frame(frame->header, frame->payload);
  FUZZ_CHECK(encoded.size() == bytes.size());
  for (std::size_t i = 0; i < encoded.size(); ++i)
    FUZZ_CHECK(encoded[i] == bytes[i]);
}

// Splits the input into frames as a stream reader would, stopping at the
// first bad header or incomplete frame.
void split_stream(std::span<const std::byte> stream) {
  while (true) {
    auto length = grove::frame_length(stream, kMaxPayload);
    if (!length || !length->has_value()) return;
    std::size_t total = **length;
    FUZZ_CHECK(total >= grove::kFrameHeaderSize);
    if (stream.size() < total) return;
    FUZZ_CHECK(grove::decode_frame(stream.first(total), kMaxPayload).ok());
    stream = stream.subspan(total);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  check_one(bytes);
  split_stream(bytes);
  return 0;
}
