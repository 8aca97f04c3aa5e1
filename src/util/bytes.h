// Byte buffers for payload encoding: big-endian integers and length-prefixed
// blobs. The reader never reads past its input; a short or inconsistent
// payload makes it fail, and callers turn that into an Error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace grove {

using Bytes = std::vector<std::byte>;
// Bytes owned elsewhere: a decoded view into a payload lives as long as it.
using ByteView = std::span<const std::byte>;

Bytes to_bytes(std::string_view text);
// FNV-1a, 64 bits: a cheap digest for comparing payloads across processes.
std::uint64_t fnv1a64(std::span<const std::byte> bytes);
std::string to_string(std::span<const std::byte> bytes);

class ByteWriter {
 public:
  // A writer that only counts what it is given: encode() measures a message
  // first, so its buffer is allocated once instead of doubling field by field.
  struct CountOnly {};
  ByteWriter() = default;
  explicit ByteWriter(CountOnly) : counting_(true) {}
  // Goes on after `start`'s bytes, in its buffer (no allocation while its
  // capacity lasts).
  explicit ByteWriter(Bytes start) : out_(std::move(start)) {}

  ByteWriter& u8(std::uint8_t value) { return put(value, 1); }
  ByteWriter& u16(std::uint16_t value) { return put(value, 2); }
  ByteWriter& u32(std::uint32_t value) { return put(value, 4); }
  ByteWriter& u64(std::uint64_t value) { return put(value, 8); }
  // A u32 length followed by the bytes.
  ByteWriter& blob(std::span<const std::byte> bytes);
  ByteWriter& text(std::string_view text);
  ByteWriter& raw(std::span<const std::byte> bytes);

  Bytes take() { return std::move(out_); }
  std::size_t size() const { return counting_ ? counted_ : out_.size(); }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }

 private:
  ByteWriter& put(std::uint64_t value, int width);
  Bytes out_;
  bool counting_ = false;
  std::size_t counted_ = 0;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}

  std::optional<std::uint8_t> u8() { return get<std::uint8_t>(); }
  std::optional<std::uint16_t> u16() { return get<std::uint16_t>(); }
  std::optional<std::uint32_t> u32() { return get<std::uint32_t>(); }
  std::optional<std::uint64_t> u64() { return get<std::uint64_t>(); }
  // A u32 length and that many bytes, borrowed from the input.
  std::optional<std::span<const std::byte>> blob();
  std::optional<std::string> text();
  std::span<const std::byte> rest() const { return in_.subspan(offset_); }
  bool done() const { return offset_ == in_.size(); }
  std::size_t remaining() const { return in_.size() - offset_; }

 private:
  template <typename T>
  std::optional<T> get() {
    if (in_.size() - offset_ < sizeof(T)) return std::nullopt;
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      value = (value << 8) | std::to_integer<std::uint64_t>(in_[offset_ + i]);
    }
    offset_ += sizeof(T);
    return static_cast<T>(value);
  }

  std::span<const std::byte> in_;
  std::size_t offset_ = 0;
};

// The error every payload decoder returns when ByteReader fails or a field
// is out of range: "malformed <what> payload".
template <typename T>
Result<T> malformed_payload(const char* what) {
  return Error{std::string("malformed ") + what + " payload"};
}

}  // namespace grove
