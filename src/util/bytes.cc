#include "util/bytes.h"

namespace grove {

Bytes to_bytes(std::string_view text) {
  Bytes out(text.size());
  for (std::size_t i = 0; i < text.size(); ++i)
    out[i] = static_cast<std::byte>(text[i]);
  return out;
}

std::uint64_t fnv1a64(std::span<const std::byte> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (std::byte byte : bytes) {
    hash ^= std::to_integer<std::uint64_t>(byte);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string to_string(std::span<const std::byte> bytes) {
  std::string out(bytes.size(), '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i)
    out[i] = static_cast<char>(bytes[i]);
  return out;
}

ByteWriter& ByteWriter::put(std::uint64_t value, int width) {
  // One resize per field, not a push_back per byte: a 4-byte message was
  // three allocations as the buffer doubled from one byte.
  if (counting_) {
    counted_ += static_cast<std::size_t>(width);
    return *this;
  }
  const std::size_t at = out_.size();
  out_.resize(at + static_cast<std::size_t>(width));
  for (int i = 0; i < width; ++i) {
    out_[at + static_cast<std::size_t>(i)] =
        static_cast<std::byte>((value >> ((width - 1 - i) * 8)) & 0xFF);
  }
  return *this;
}

ByteWriter& ByteWriter::blob(std::span<const std::byte> bytes) {
  u32(static_cast<std::uint32_t>(bytes.size()));
  return raw(bytes);
}

ByteWriter& ByteWriter::text(std::string_view text) {
  u32(static_cast<std::uint32_t>(text.size()));
  if (counting_) {
    counted_ += text.size();
    return *this;
  }
  const auto* bytes = reinterpret_cast<const std::byte*>(text.data());
  out_.insert(out_.end(), bytes, bytes + text.size());
  return *this;
}

ByteWriter& ByteWriter::raw(std::span<const std::byte> bytes) {
  if (counting_) {
    counted_ += bytes.size();
    return *this;
  }
  out_.insert(out_.end(), bytes.begin(), bytes.end());
  return *this;
}

std::optional<std::span<const std::byte>> ByteReader::blob() {
  auto length = u32();
  if (!length || in_.size() - offset_ < *length) return std::nullopt;
  auto out = in_.subspan(offset_, *length);
  offset_ += *length;
  return out;
}

std::optional<std::string> ByteReader::text() {
  auto bytes = blob();
  if (!bytes) return std::nullopt;
  return to_string(*bytes);
}

}  // namespace grove
