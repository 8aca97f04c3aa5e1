#include "rml/transport/handshake.h"

#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace grove {
namespace {

static_assert(kHandshakeMacSize == crypto_auth_hmacsha256_BYTES);
static_assert(kDvmSecretSize == crypto_auth_hmacsha256_KEYBYTES);

enum class MessageKind : std::uint8_t { hello = 1, challenge = 2, proof = 3 };

constexpr std::string_view kTranscriptDomain = "grove/rml/handshake/v1";
constexpr std::string_view kAcceptorLabel = "acceptor-proof";
constexpr std::string_view kConnectorLabel = "connector-proof";

using Mac = std::array<std::byte, kHandshakeMacSize>;

// libsodium must be initialised once before its RNG is used; sodium_init is
// thread-safe and idempotent. Without it nothing here can be trusted.
void ensure_sodium() {
  if (sodium_init() < 0) {
    std::fputs("grove: libsodium failed to initialise\n", stderr);
    std::abort();
  }
}

const unsigned char* as_uchar(const std::byte* bytes) {
  return reinterpret_cast<const unsigned char*>(bytes);
}

void put_u32(std::vector<std::byte>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<std::byte>((value >> shift) & 0xFF));
  }
}

std::uint32_t get_u32(std::span<const std::byte> bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = (value << 8) | std::to_integer<std::uint32_t>(bytes[i]);
  return value;
}

std::vector<std::byte> preamble(MessageKind kind, std::size_t total_size) {
  std::vector<std::byte> out;
  out.reserve(total_size);
  put_u32(out, kHandshakeMagic);
  out.push_back(static_cast<std::byte>(kHandshakeVersion));
  out.push_back(static_cast<std::byte>(kind));
  out.push_back(std::byte{0});
  out.push_back(std::byte{0});
  return out;
}

std::string_view kind_name(std::uint8_t kind) {
  switch (kind) {
    case static_cast<std::uint8_t>(MessageKind::hello):
      return "HELLO";
    case static_cast<std::uint8_t>(MessageKind::challenge):
      return "CHALLENGE";
    case static_cast<std::uint8_t>(MessageKind::proof):
      return "PROOF";
    default:
      return "unknown";
  }
}

// Checks size, magic, version, kind and the reserved bytes of a message.
Result<Ok> check_preamble(std::span<const std::byte> message, MessageKind expected,
                          std::size_t expected_size) {
  std::string name(kind_name(static_cast<std::uint8_t>(expected)));
  if (message.size() != expected_size) {
    return Error{"handshake " + name + " is " + std::to_string(message.size()) +
                 " bytes, expected " + std::to_string(expected_size)};
  }
  if (get_u32(message) != kHandshakeMagic) {
    return Error{"bad handshake magic (not a grove rml peer?)"};
  }
  auto version = std::to_integer<unsigned>(message[4]);
  if (version != kHandshakeVersion) {
    return Error{"unsupported handshake version " + std::to_string(version) + " (expected " +
                 std::to_string(kHandshakeVersion) + ")"};
  }
  auto kind = std::to_integer<std::uint8_t>(message[5]);
  if (kind != static_cast<std::uint8_t>(expected)) {
    return Error{"unexpected handshake message " + std::string(kind_name(kind)) + " (kind " +
                 std::to_string(kind) + "), expected " + name};
  }
  if (message[6] != std::byte{0} || message[7] != std::byte{0}) {
    return Error{"nonzero reserved bytes in handshake " + name};
  }
  return Ok{};
}

struct Transcript {
  Vpid connector;
  Vpid acceptor;
  const HandshakeNonce& connector_nonce;
  const HandshakeNonce& acceptor_nonce;
};

Mac transcript_mac(const SecretKey& secret, std::string_view role_label,
                   const Transcript& transcript) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, as_uchar(secret.bytes().data()), secret.bytes().size());
  auto update = [&state](const void* data, std::size_t size) {
    crypto_auth_hmacsha256_update(&state, static_cast<const unsigned char*>(data), size);
  };
  update(kTranscriptDomain.data(), kTranscriptDomain.size());
  const unsigned char label_size = static_cast<unsigned char>(role_label.size());
  update(&label_size, 1);
  update(role_label.data(), role_label.size());
  std::vector<std::byte> vpids;
  put_u32(vpids, transcript.connector);
  put_u32(vpids, transcript.acceptor);
  update(vpids.data(), vpids.size());
  update(transcript.connector_nonce.data(), transcript.connector_nonce.size());
  update(transcript.acceptor_nonce.data(), transcript.acceptor_nonce.size());
  Mac mac;
  crypto_auth_hmacsha256_final(&state, reinterpret_cast<unsigned char*>(mac.data()));
  sodium_memzero(&state, sizeof state);
  return mac;
}

bool mac_equals(std::span<const std::byte> received, const Mac& expected) {
  return crypto_verify_32(as_uchar(received.data()), as_uchar(expected.data())) == 0;
}

}  // namespace

HandshakeNonce random_handshake_nonce() {
  ensure_sodium();
  HandshakeNonce nonce;
  randombytes_buf(nonce.data(), nonce.size());
  return nonce;
}

Result<SecretKey> SecretKey::from_bytes(std::span<const std::byte> bytes) {
  if (bytes.size() != kDvmSecretSize) {
    return Error{"DVM secret must be " + std::to_string(kDvmSecretSize) + " bytes, got " +
                 std::to_string(bytes.size())};
  }
  SecretKey key;
  std::copy(bytes.begin(), bytes.end(), key.bytes_.begin());
  return key;
}

SecretKey::~SecretKey() {
  sodium_memzero(bytes_.data(), bytes_.size());
}

std::string_view handshake_state_name(HandshakeStateKind state) {
  switch (state) {
    case HandshakeStateKind::start:
      return "start";
    case HandshakeStateKind::awaiting_hello:
      return "awaiting-hello";
    case HandshakeStateKind::awaiting_challenge:
      return "awaiting-challenge";
    case HandshakeStateKind::awaiting_proof:
      return "awaiting-proof";
    case HandshakeStateKind::established:
      return "established";
    case HandshakeStateKind::failed:
      return "failed";
  }
  return "unknown";
}

Handshake::Handshake(HandshakeRole role, Vpid self, const SecretKey& secret,
                     const HandshakeNonce& nonce)
    : role_(role),
      state_(role == HandshakeRole::connector ? HandshakeStateKind::start
                                              : HandshakeStateKind::awaiting_hello),
      self_(self),
      secret_(secret),
      own_nonce_(nonce) {
  ensure_sodium();
}

Handshake Handshake::connector(Vpid self, Vpid expected_peer, const SecretKey& secret,
                               const HandshakeNonce& nonce) {
  Handshake handshake(HandshakeRole::connector, self, secret, nonce);
  handshake.peer_ = expected_peer;
  return handshake;
}

Handshake Handshake::acceptor(Vpid self, const SecretKey& secret, const HandshakeNonce& nonce) {
  return Handshake(HandshakeRole::acceptor, self, secret, nonce);
}

std::vector<std::byte> Handshake::start() {
  if (role_ != HandshakeRole::connector) return {};
  if (state_ != HandshakeStateKind::start) {
    std::fputs("grove: Handshake::start called twice\n", stderr);
    std::abort();
  }
  std::vector<std::byte> hello = preamble(MessageKind::hello, kHelloSize);
  put_u32(hello, self_);
  hello.insert(hello.end(), own_nonce_.begin(), own_nonce_.end());
  state_ = HandshakeStateKind::awaiting_challenge;
  return hello;
}

std::size_t Handshake::next_message_size() const {
  switch (state_) {
    case HandshakeStateKind::awaiting_hello:
      return kHelloSize;
    case HandshakeStateKind::awaiting_challenge:
      return kChallengeSize;
    case HandshakeStateKind::awaiting_proof:
      return kProofSize;
    case HandshakeStateKind::start:
    case HandshakeStateKind::established:
    case HandshakeStateKind::failed:
      return 0;
  }
  return 0;
}

std::optional<Vpid> Handshake::peer() const {
  if (!established()) return std::nullopt;
  return peer_;
}

Error Handshake::fail(std::string reason) {
  state_ = HandshakeStateKind::failed;
  return Error{std::move(reason)};
}

Result<std::vector<std::byte>> Handshake::receive(std::span<const std::byte> message) {
  switch (state_) {
    case HandshakeStateKind::awaiting_hello:
      return receive_hello(message);
    case HandshakeStateKind::awaiting_challenge:
      return receive_challenge(message);
    case HandshakeStateKind::awaiting_proof:
      return receive_proof(message);
    case HandshakeStateKind::start:
      return fail("handshake message received before HELLO was sent");
    case HandshakeStateKind::established:
      return Error{"handshake message received after the handshake completed"};
    case HandshakeStateKind::failed:
      return Error{"handshake message received after the handshake failed"};
  }
  return fail("handshake in an unknown state");
}

Result<std::vector<std::byte>> Handshake::receive_hello(std::span<const std::byte> message) {
  if (auto checked = check_preamble(message, MessageKind::hello, kHelloSize); !checked) {
    return fail(checked.error().message);
  }
  std::span<const std::byte> body = message.subspan(kHandshakePreambleSize);
  Vpid claimed = get_u32(body);
  if (claimed == self_) {
    return fail("peer claims this daemon's own vpid " + std::to_string(self_));
  }
  peer_ = claimed;
  std::copy_n(body.begin() + 4, kHandshakeNonceSize, peer_nonce_.begin());

  Mac mac = transcript_mac(secret_, kAcceptorLabel, {peer_, self_, peer_nonce_, own_nonce_});
  std::vector<std::byte> challenge = preamble(MessageKind::challenge, kChallengeSize);
  put_u32(challenge, self_);
  challenge.insert(challenge.end(), own_nonce_.begin(), own_nonce_.end());
  challenge.insert(challenge.end(), mac.begin(), mac.end());
  state_ = HandshakeStateKind::awaiting_proof;
  return challenge;
}

Result<std::vector<std::byte>> Handshake::receive_challenge(std::span<const std::byte> message) {
  if (auto checked = check_preamble(message, MessageKind::challenge, kChallengeSize); !checked) {
    return fail(checked.error().message);
  }
  std::span<const std::byte> body = message.subspan(kHandshakePreambleSize);
  Vpid claimed = get_u32(body);
  if (claimed != peer_) {
    return fail("peer answered as vpid " + std::to_string(claimed) + ", expected vpid " +
                std::to_string(peer_));
  }
  std::copy_n(body.begin() + 4, kHandshakeNonceSize, peer_nonce_.begin());
  std::span<const std::byte> received_mac = body.subspan(4 + kHandshakeNonceSize);
  Mac expected = transcript_mac(secret_, kAcceptorLabel, {self_, peer_, own_nonce_, peer_nonce_});
  if (!mac_equals(received_mac, expected)) {
    return fail("handshake MAC mismatch: vpid " + std::to_string(peer_) +
                " did not prove knowledge of this DVM's secret");
  }

  Mac proof_mac = transcript_mac(secret_, kConnectorLabel, {self_, peer_, own_nonce_, peer_nonce_});
  std::vector<std::byte> proof = preamble(MessageKind::proof, kProofSize);
  proof.insert(proof.end(), proof_mac.begin(), proof_mac.end());
  state_ = HandshakeStateKind::established;
  return proof;
}

Result<std::vector<std::byte>> Handshake::receive_proof(std::span<const std::byte> message) {
  if (auto checked = check_preamble(message, MessageKind::proof, kProofSize); !checked) {
    return fail(checked.error().message);
  }
  std::span<const std::byte> received_mac = message.subspan(kHandshakePreambleSize);
  Mac expected = transcript_mac(secret_, kConnectorLabel, {peer_, self_, peer_nonce_, own_nonce_});
  if (!mac_equals(received_mac, expected)) {
    return fail("handshake MAC mismatch: peer claiming vpid " + std::to_string(peer_) +
                " did not prove knowledge of this DVM's secret");
  }
  state_ = HandshakeStateKind::established;
  return std::vector<std::byte>{};
}

FrameKeys Handshake::frame_keys(FrameProtection protection) const {
  FrameKeys keys;
  if (state_ != HandshakeStateKind::established) return keys;
  const bool connector = role_ == HandshakeRole::connector;
  const Transcript transcript = connector ? Transcript{self_, peer_, own_nonce_, peer_nonce_}
                                          : Transcript{peer_, self_, peer_nonce_, own_nonce_};
  const std::string mode(frame_protection_name(protection));
  Mac outbound = transcript_mac(secret_, "frames " + mode + " connector-to-acceptor", transcript);
  Mac inbound = transcript_mac(secret_, "frames " + mode + " acceptor-to-connector", transcript);
  if (!connector) std::swap(outbound, inbound);
  static_assert(kFrameKeySize == kHandshakeMacSize);
  std::copy(outbound.begin(), outbound.end(), keys.send.begin());
  std::copy(inbound.begin(), inbound.end(), keys.receive.begin());
  sodium_memzero(outbound.data(), outbound.size());
  sodium_memzero(inbound.data(), inbound.size());
  return keys;
}

}  // namespace grove
