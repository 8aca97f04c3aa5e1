// libFuzzer target for the handshake state machine
// (rml/transport/handshake.h). The first input byte picks the role under
// test; the rest is what the peer sends, cut into messages the way the
// transport cuts its stream. Nothing may crash, a refusal must leave the
// handshake failed, and without the secret the fuzzer must never get a
// handshake established. Built and run by .ci/fuzz.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "rml/transport/handshake.h"

namespace {

#define FUZZ_CHECK(condition)                                                   \
  do {                                                                          \
    if (!(condition)) {                                                         \
      std::fprintf(stderr, "handshake fuzzer: check failed: %s\n", #condition); \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

grove::SecretKey fixed_key() {
  std::array<std::byte, grove::kDvmSecretSize> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>(0xA0 + i);
  return grove::SecretKey::from_bytes(bytes).value();
}

grove::HandshakeNonce fixed_nonce() {
  grove::HandshakeNonce nonce{};
  for (std::size_t i = 0; i < nonce.size(); ++i)
    nonce[i] = static_cast<std::byte>(i * 3);
  return nonce;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const grove::SecretKey key = fixed_key();
  const bool connector = (data[0] & 1) != 0;
  grove::Handshake handshake = connector ? grove::Handshake::connector(1, 2, key, fixed_nonce())
                                         : grove::Handshake::acceptor(2, key, fixed_nonce());
  handshake.start();
  std::span<const std::byte> stream(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  // Alternate whole messages with odd-sized slices so size checks get exercised.
  bool whole = (data[0] & 2) == 0;
  while (!stream.empty()) {
    std::size_t wanted = handshake.next_message_size();
    if (wanted == 0) break;
    std::size_t take = whole ? wanted : (wanted / 2 + stream.size() % 7);
    if (take > stream.size()) take = stream.size();
    auto reply = handshake.receive(stream.first(take));
    stream = stream.subspan(take);
    if (!reply) {
      FUZZ_CHECK(handshake.state() == grove::HandshakeStateKind::failed);
      FUZZ_CHECK(!handshake.peer().has_value());
      FUZZ_CHECK(handshake.next_message_size() == 0);
      FUZZ_CHECK(!reply.error().message.empty());
      break;
    }
    // A reply is a whole message of the next kind, or nothing.
    FUZZ_CHECK(reply->empty() || reply->size() == grove::kChallengeSize ||
               reply->size() == grove::kProofSize);
    whole = !whole;
  }
  // Forging a MAC without the secret is out of reach; success means a bug.
  FUZZ_CHECK(!handshake.established());
  return 0;
}
