// The mutual authentication every rml connection starts with. A pure state
// machine: bytes in, bytes out, no sockets, no clock; the only randomness is
// the nonce, which the caller hands in (random_handshake_nonce() for real
// connections, fixed values in tests).
//
// Both sides prove they hold the per-DVM secret with HMAC-SHA256 over a
// domain-separated transcript (both vpids, both nonces, and the prover's role):
//
//   connector -> acceptor  HELLO      magic u32 | version u8 | kind u8 | 0 u16 |
//                                     connector vpid u32 | connector nonce [32]
//   acceptor -> connector  CHALLENGE  magic | version | kind | 0 |
//                                     acceptor vpid u32 | acceptor nonce [32] |
//                                     HMAC("acceptor-proof" transcript) [32]
//   connector -> acceptor  PROOF      magic | version | kind | 0 |
//                                     HMAC("connector-proof" transcript) [32]
//
// Integers are big-endian. Every message has a fixed size, so a stream reader
// asks next_message_size() how many bytes to hand to receive(). The connector
// is established once the CHALLENGE verifies (it then sends PROOF and may
// pipeline frames behind it); the acceptor once the PROOF verifies. The role
// label keeps a MAC from being reflected back as the other role's proof.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "rml/membership.h"
#include "rml/transport/frame_seal.h"
#include "util/result.h"

namespace grove {

inline constexpr std::size_t kDvmSecretSize = 32;
inline constexpr std::size_t kHandshakeNonceSize = 32;
inline constexpr std::size_t kHandshakeMacSize = 32;
inline constexpr std::uint32_t kHandshakeMagic = 0x47524831;  // "GRH1"
inline constexpr std::uint8_t kHandshakeVersion = 1;

inline constexpr std::size_t kHandshakePreambleSize = 8;  // magic, version, kind, reserved
inline constexpr std::size_t kHelloSize = kHandshakePreambleSize + 4 + kHandshakeNonceSize;
inline constexpr std::size_t kChallengeSize =
    kHandshakePreambleSize + 4 + kHandshakeNonceSize + kHandshakeMacSize;
inline constexpr std::size_t kProofSize = kHandshakePreambleSize + kHandshakeMacSize;

using HandshakeNonce = std::array<std::byte, kHandshakeNonceSize>;

// A fresh nonce from the system's CSPRNG (libsodium's randombytes_buf).
HandshakeNonce random_handshake_nonce();

// The DVM secret held by value; zeroed when destroyed.
class SecretKey {
 public:
  // The secret must be exactly kDvmSecretSize bytes.
  static Result<SecretKey> from_bytes(std::span<const std::byte> bytes);
  SecretKey(const SecretKey&) = default;
  SecretKey& operator=(const SecretKey&) = default;
  ~SecretKey();

  std::span<const std::byte, kDvmSecretSize> bytes() const { return bytes_; }

 private:
  SecretKey() = default;
  std::array<std::byte, kDvmSecretSize> bytes_{};
};

enum class HandshakeRole : std::uint8_t { connector, acceptor };

enum class HandshakeStateKind : std::uint8_t {
  start,               // connector before start()
  awaiting_hello,      // acceptor
  awaiting_challenge,  // connector, HELLO sent
  awaiting_proof,      // acceptor, CHALLENGE sent
  established,
  failed,
};

class Handshake {
 public:
  // The side that opened the connection. It knows which vpid it dialled and
  // refuses an acceptor that proves to be anyone else.
  static Handshake connector(Vpid self, Vpid expected_peer, const SecretKey& secret,
                             const HandshakeNonce& nonce);
  // The side that accepted the connection. It learns the peer's vpid from
  // HELLO and refuses a peer claiming its own vpid.
  static Handshake acceptor(Vpid self, const SecretKey& secret, const HandshakeNonce& nonce);

  // The connector's HELLO (call once, first); the acceptor sends nothing
  // first and gets an empty vector.
  std::vector<std::byte> start();

  // How many bytes the next message from the peer has; 0 once established or failed.
  std::size_t next_message_size() const;

  // Consumes one whole message from the peer and returns the reply to send
  // (empty when there is none). Any malformed, unexpected or unauthentic
  // message is an Error with the reason, and the handshake is failed for good.
  Result<std::vector<std::byte>> receive(std::span<const std::byte> message);

  HandshakeRole role() const { return role_; }
  HandshakeStateKind state() const { return state_; }
  bool established() const { return state_ == HandshakeStateKind::established; }
  // The authenticated peer, once established.
  std::optional<Vpid> peer() const;
  // Once established: this connection's frame keys, one per direction,
  // derived from the secret and the transcript (both vpids, both nonces)
  // and bound to `protection`, so peers that disagree on it fail the first
  // frame instead of misreading each other.
  FrameKeys frame_keys(FrameProtection protection) const;

 private:
  Handshake(HandshakeRole role, Vpid self, const SecretKey& secret, const HandshakeNonce& nonce);
  Result<std::vector<std::byte>> receive_hello(std::span<const std::byte> message);
  Result<std::vector<std::byte>> receive_challenge(std::span<const std::byte> message);
  Result<std::vector<std::byte>> receive_proof(std::span<const std::byte> message);
  Error fail(std::string reason);

  HandshakeRole role_;
  HandshakeStateKind state_;
  Vpid self_;
  Vpid peer_ = 0;
  SecretKey secret_;
  HandshakeNonce own_nonce_;
  HandshakeNonce peer_nonce_{};
};

std::string_view handshake_state_name(HandshakeStateKind state);

}  // namespace grove
