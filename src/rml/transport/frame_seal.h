// Every frame on an authenticated connection carries a 16-byte tag
// (ChaCha20-Poly1305, libsodium) under a key of that connection and
// direction, with the frame's sequence number as the nonce. The number is
// never sent: both ends count, so a frame injected, altered, replayed,
// dropped or reordered on the path fails the tag and the connection closes.
// `integrity` authenticates header and payload as they are; `encryption`
// also encrypts the payload (the header, needed to find the frame's end,
// stays readable but authenticated). Pure: bytes in, bytes out.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace grove {

enum class FrameProtection : std::uint8_t { none, integrity, encryption };

inline constexpr std::size_t kFrameKeySize = 32;
inline constexpr std::size_t kFrameTagSize = 16;
using FrameKey = std::array<std::byte, kFrameKeySize>;

Result<FrameProtection> parse_frame_protection(std::string_view text);
std::string_view frame_protection_name(FrameProtection protection);

// The keys of one connection, from one side's point of view.
struct FrameKeys {
  FrameKey send{};
  FrameKey receive{};
  ~FrameKeys();
};

// One direction of one connection. Keys are zeroed when it goes.
class FrameSeal {
 public:
  FrameSeal(FrameProtection protection, const FrameKey& key, std::size_t header_size);
  ~FrameSeal();
  FrameSeal(const FrameSeal&) = delete;
  FrameSeal& operator=(const FrameSeal&) = delete;

  // Bytes a sealed frame has beyond the frame itself.
  std::size_t overhead() const { return protection_ == FrameProtection::none ? 0 : kFrameTagSize; }
  // Sender: appends the tag (encrypting the payload in place first).
  void seal(std::vector<std::byte>& frame);
  // Receiver: checks the tag of `sealed` (frame and tag), decrypts the
  // payload in place, and drops the tag. An Error means the frame is not
  // the next one its sender sealed: the connection must close.
  Status open(std::vector<std::byte>& sealed);

 private:
  FrameProtection protection_;
  FrameKey key_;
  std::size_t header_size_;
  std::uint64_t sequence_ = 0;
};

}  // namespace grove
