#include "rml/transport/frame_seal.h"

#include <sodium.h>

#include <string>

namespace grove {
namespace {

static_assert(kFrameKeySize == crypto_aead_chacha20poly1305_ietf_KEYBYTES);
static_assert(kFrameTagSize == crypto_aead_chacha20poly1305_ietf_ABYTES);

using Nonce = std::array<unsigned char, crypto_aead_chacha20poly1305_ietf_NPUBBYTES>;

// The sequence number, little-endian, in the nonce's last 8 bytes. A key
// lives for one connection and one direction, so no nonce repeats.
Nonce nonce_for(std::uint64_t sequence) {
  Nonce nonce{};
  for (std::size_t i = 0; i < 8; ++i)
    nonce[nonce.size() - 8 + i] = static_cast<unsigned char>(sequence >> (8 * i));
  return nonce;
}

unsigned char* as_uchar(std::byte* bytes) {
  return reinterpret_cast<unsigned char*>(bytes);
}

}  // namespace

Result<FrameProtection> parse_frame_protection(std::string_view text) {
  if (text == "integrity") return FrameProtection::integrity;
  if (text == "encryption") return FrameProtection::encryption;
  if (text == "none") return FrameProtection::none;
  return Error{"'" + std::string(text) + "' is not integrity, encryption or none"};
}

std::string_view frame_protection_name(FrameProtection protection) {
  switch (protection) {
    case FrameProtection::none:
      return "none";
    case FrameProtection::integrity:
      return "integrity";
    case FrameProtection::encryption:
      return "encryption";
  }
  return "unknown";
}

FrameKeys::~FrameKeys() {
  sodium_memzero(send.data(), send.size());
  sodium_memzero(receive.data(), receive.size());
}

FrameSeal::FrameSeal(FrameProtection protection, const FrameKey& key, std::size_t header_size)
    : protection_(protection), key_(key), header_size_(header_size) {}

FrameSeal::~FrameSeal() {
  sodium_memzero(key_.data(), key_.size());
}

void FrameSeal::seal(std::vector<std::byte>& frame) {
  if (protection_ == FrameProtection::none) return;
  const Nonce nonce = nonce_for(sequence_++);
  std::array<unsigned char, kFrameTagSize> tag;
  // Integrity only: the whole frame is "additional data" and the message is
  // empty (libsodium wants a pointer for it all the same).
  unsigned char empty = 0;
  if (protection_ == FrameProtection::integrity) {
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        &empty, tag.data(), nullptr, &empty, 0, as_uchar(frame.data()), frame.size(), nullptr,
        nonce.data(), as_uchar(key_.data()));
  } else {
    const std::size_t header = std::min(header_size_, frame.size());
    unsigned char* payload = as_uchar(frame.data()) + header;
    crypto_aead_chacha20poly1305_ietf_encrypt_detached(
        payload, tag.data(), nullptr, payload, frame.size() - header, as_uchar(frame.data()),
        header, nullptr, nonce.data(), as_uchar(key_.data()));
  }
  const auto* bytes = reinterpret_cast<const std::byte*>(tag.data());
  frame.insert(frame.end(), bytes, bytes + tag.size());
}

Status FrameSeal::open(std::vector<std::byte>& sealed) {
  if (protection_ == FrameProtection::none) return ok_status();
  if (sealed.size() < kFrameTagSize) return Error{"frame shorter than its tag"};
  const std::size_t size = sealed.size() - kFrameTagSize;
  const unsigned char* tag = as_uchar(sealed.data()) + size;
  const Nonce nonce = nonce_for(sequence_);
  int verified = -1;
  unsigned char empty = 0;
  if (protection_ == FrameProtection::integrity) {
    verified = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
        &empty, nullptr, &empty, 0, tag, as_uchar(sealed.data()), size, nonce.data(),
        as_uchar(key_.data()));
  } else {
    const std::size_t header = std::min(header_size_, size);
    unsigned char* payload = as_uchar(sealed.data()) + header;
    verified = crypto_aead_chacha20poly1305_ietf_decrypt_detached(
        payload, nullptr, payload, size - header, tag, as_uchar(sealed.data()), header,
        nonce.data(), as_uchar(key_.data()));
  }
  if (verified != 0) {
    return Error{"frame " + std::to_string(sequence_) +
                 " failed authentication (altered, injected, replayed or reordered on the way, "
                 "or the peers' rml_frame_protection differ)"};
  }
  ++sequence_;
  sealed.resize(size);
  return ok_status();
}

}  // namespace grove
