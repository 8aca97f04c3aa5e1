// The pure handshake: both roles, every refusal, with fixed nonces so each
// run sends the same bytes.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "rml/transport/dvm_secret.h"
#include "rml/transport/handshake.h"

using namespace grove;

namespace {

SecretKey key_of(std::byte fill) {
  std::vector<std::byte> bytes(kDvmSecretSize, fill);
  bytes[0] = std::byte{0x5A};
  return SecretKey::from_bytes(bytes).value();
}

HandshakeNonce nonce_of(std::uint8_t fill) {
  HandshakeNonce nonce;
  for (std::size_t i = 0; i < nonce.size(); ++i) {
    nonce[i] = static_cast<std::byte>(fill + i);
  }
  return nonce;
}

struct Pair {
  Handshake connector;
  Handshake acceptor;
};

Pair make_pair(const SecretKey& connector_key, const SecretKey& acceptor_key) {
  return Pair{Handshake::connector(3, 7, connector_key, nonce_of(0x10)),
              Handshake::acceptor(7, acceptor_key, nonce_of(0x80))};
}

std::string error_of(const Result<std::vector<std::byte>>& result) {
  REQUIRE_FALSE(result);
  return result.error().message;
}

}  // namespace

TEST_CASE("a connector and an acceptor with the same secret authenticate each other",
          "[handshake]") {
  SecretKey key = key_of(std::byte{1});
  Pair pair = make_pair(key, key);
  CHECK(pair.connector.state() == HandshakeStateKind::start);
  CHECK(pair.acceptor.start().empty());
  CHECK(pair.acceptor.next_message_size() == kHelloSize);

  std::vector<std::byte> hello = pair.connector.start();
  REQUIRE(hello.size() == kHelloSize);
  CHECK(pair.connector.next_message_size() == kChallengeSize);
  CHECK_FALSE(pair.connector.peer());

  auto challenge = pair.acceptor.receive(hello);
  REQUIRE(challenge);
  REQUIRE(challenge->size() == kChallengeSize);
  CHECK(pair.acceptor.state() == HandshakeStateKind::awaiting_proof);
  CHECK(pair.acceptor.next_message_size() == kProofSize);
  CHECK_FALSE(pair.acceptor.established());

  auto proof = pair.connector.receive(*challenge);
  REQUIRE(proof);
  REQUIRE(proof->size() == kProofSize);
  CHECK(pair.connector.established());
  CHECK(pair.connector.peer() == std::optional<Vpid>{7});
  CHECK(pair.connector.next_message_size() == 0);

  auto done = pair.acceptor.receive(*proof);
  REQUIRE(done);
  CHECK(done->empty());
  CHECK(pair.acceptor.established());
  CHECK(pair.acceptor.peer() == std::optional<Vpid>{3});
  CHECK(pair.acceptor.next_message_size() == 0);

  // Nothing more is accepted once established.
  CHECK_THAT(error_of(pair.acceptor.receive(*proof)), Catch::Contains("after the handshake"));
}

TEST_CASE("the handshake is deterministic for fixed nonces and differs when a nonce differs",
          "[handshake]") {
  SecretKey key = key_of(std::byte{1});
  Pair first = make_pair(key, key);
  Pair second = make_pair(key, key);
  auto hello = first.connector.start();
  CHECK(hello == second.connector.start());
  auto challenge = first.acceptor.receive(hello);
  REQUIRE(challenge);
  CHECK(*challenge == *second.acceptor.receive(hello));

  Handshake other = Handshake::acceptor(7, key, nonce_of(0x81));
  auto other_challenge = other.receive(hello);
  REQUIRE(other_challenge);
  CHECK(*other_challenge != *challenge);
}

TEST_CASE("an acceptor with a different secret is refused by the connector", "[handshake]") {
  Pair pair = make_pair(key_of(std::byte{1}), key_of(std::byte{2}));
  auto challenge = pair.acceptor.receive(pair.connector.start());
  REQUIRE(challenge);  // the acceptor cannot tell yet
  std::string reason = error_of(pair.connector.receive(*challenge));
  CHECK_THAT(reason, Catch::Contains("MAC mismatch"));
  CHECK(pair.connector.state() == HandshakeStateKind::failed);
  CHECK_FALSE(pair.connector.peer());
  CHECK(pair.connector.next_message_size() == 0);
  CHECK_THAT(error_of(pair.connector.receive(*challenge)), Catch::Contains("failed"));
}

TEST_CASE("a connector with a different secret is refused by the acceptor", "[handshake]") {
  SecretKey good = key_of(std::byte{1});
  SecretKey bad = key_of(std::byte{2});
  Pair pair = make_pair(bad, good);
  auto challenge = pair.acceptor.receive(pair.connector.start());
  REQUIRE(challenge);
  // The honest connector notices at once; an impostor would send its proof
  // anyway. Forge that proof: the same transcript (vpids 3 and 7, the same
  // nonces) played against an acceptor that also holds the wrong secret.
  CHECK_FALSE(pair.connector.receive(*challenge));
  Handshake forger = Handshake::connector(3, 7, bad, nonce_of(0x10));
  Handshake accomplice = Handshake::acceptor(7, bad, nonce_of(0x80));
  auto forged_proof = forger.receive(*accomplice.receive(forger.start()));
  REQUIRE(forged_proof);

  std::string reason = error_of(pair.acceptor.receive(*forged_proof));
  CHECK_THAT(reason, Catch::Contains("MAC mismatch"));
  CHECK_THAT(reason, Catch::Contains("vpid 3"));
  CHECK(pair.acceptor.state() == HandshakeStateKind::failed);
  CHECK_FALSE(pair.acceptor.peer());
}

TEST_CASE("a tampered MAC or nonce is refused", "[handshake]") {
  SecretKey key = key_of(std::byte{1});
  for (std::size_t index :
       {std::size_t{12}, kChallengeSize - 1, kChallengeSize - kHandshakeMacSize}) {
    Pair pair = make_pair(key, key);
    auto challenge = pair.acceptor.receive(pair.connector.start());
    REQUIRE(challenge);
    (*challenge)[index] ^= std::byte{0x01};
    INFO("flipped byte " << index);
    CHECK_THAT(error_of(pair.connector.receive(*challenge)), Catch::Contains("MAC mismatch"));
  }

  Pair pair = make_pair(key, key);
  auto challenge = pair.acceptor.receive(pair.connector.start());
  auto proof = pair.connector.receive(*challenge);
  REQUIRE(proof);
  (*proof)[kProofSize - 5] ^= std::byte{0x80};
  CHECK_THAT(error_of(pair.acceptor.receive(*proof)), Catch::Contains("MAC mismatch"));
}

TEST_CASE("a HELLO whose nonce was tampered in flight fails at the proof", "[handshake]") {
  SecretKey key = key_of(std::byte{1});
  Pair pair = make_pair(key, key);
  auto hello = pair.connector.start();
  hello[20] ^= std::byte{0x04};  // inside the connector nonce
  auto challenge = pair.acceptor.receive(hello);
  REQUIRE(challenge);
  // The acceptor's MAC covers the nonce it saw, not the one the connector sent.
  CHECK_THAT(error_of(pair.connector.receive(*challenge)), Catch::Contains("MAC mismatch"));
}

TEST_CASE("truncated, oversized and garbage messages are refused with a reason", "[handshake]") {
  SecretKey key = key_of(std::byte{1});
  auto hello = Handshake::connector(3, 7, key, nonce_of(0x10)).start();

  SECTION("truncated") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    std::span<const std::byte> short_hello(hello.data(), hello.size() - 1);
    CHECK_THAT(error_of(acceptor.receive(short_hello)),
               Catch::Contains("is 43 bytes, expected 44"));
    CHECK(acceptor.state() == HandshakeStateKind::failed);
  }
  SECTION("empty") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    CHECK_THAT(error_of(acceptor.receive({})), Catch::Contains("is 0 bytes"));
  }
  SECTION("too long") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto longer = hello;
    longer.push_back(std::byte{0});
    CHECK_THAT(error_of(acceptor.receive(longer)), Catch::Contains("is 45 bytes"));
  }
  SECTION("wrong magic") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    std::vector<std::byte> garbage(kHelloSize, std::byte{'G'});
    CHECK_THAT(error_of(acceptor.receive(garbage)), Catch::Contains("bad handshake magic"));
  }
  SECTION("wrong version") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto bad = hello;
    bad[4] = std::byte{9};
    CHECK_THAT(error_of(acceptor.receive(bad)), Catch::Contains("unsupported handshake version 9"));
  }
  SECTION("nonzero reserved bytes") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto bad = hello;
    bad[7] = std::byte{1};
    CHECK_THAT(error_of(acceptor.receive(bad)), Catch::Contains("reserved"));
  }
  SECTION("a message of the wrong kind") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto bad = hello;
    bad[5] = std::byte{3};  // PROOF where HELLO belongs
    CHECK_THAT(error_of(acceptor.receive(bad)),
               Catch::Contains("unexpected handshake message PROOF"));
  }
  SECTION("a connector handed a HELLO instead of a CHALLENGE") {
    Handshake connector = Handshake::connector(3, 7, key, nonce_of(0x10));
    connector.start();
    std::vector<std::byte> padded = hello;
    padded.resize(kChallengeSize);
    CHECK_THAT(error_of(connector.receive(padded)), Catch::Contains("expected CHALLENGE"));
  }
  SECTION("a connector receiving before it sent HELLO") {
    Handshake connector = Handshake::connector(3, 7, key, nonce_of(0x10));
    CHECK_THAT(error_of(connector.receive(hello)), Catch::Contains("before HELLO"));
  }
}

TEST_CASE("role confusion: a peer's own MAC reflected back is refused", "[handshake]") {
  SecretKey key = key_of(std::byte{1});

  SECTION("the acceptor's challenge MAC replayed as the connector's proof") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto challenge = acceptor.receive(Handshake::connector(3, 7, key, nonce_of(0x10)).start());
    REQUIRE(challenge);
    // An attacker without the secret answers with the only MAC it has seen.
    std::vector<std::byte> reflected(challenge->begin(),
                                     challenge->begin() + kHandshakePreambleSize);
    reflected[5] = std::byte{3};  // kind PROOF
    reflected.insert(reflected.end(), challenge->end() - kHandshakeMacSize, challenge->end());
    REQUIRE(reflected.size() == kProofSize);
    CHECK_THAT(error_of(acceptor.receive(reflected)), Catch::Contains("MAC mismatch"));
  }

  SECTION("a peer claiming the acceptor's own vpid") {
    Handshake acceptor = Handshake::acceptor(7, key, nonce_of(0x80));
    auto hello = Handshake::connector(7, 9, key, nonce_of(0x10)).start();
    CHECK_THAT(error_of(acceptor.receive(hello)), Catch::Contains("own vpid 7"));
  }

  SECTION("the connector's HELLO reflected back as a challenge") {
    Handshake connector = Handshake::connector(3, 7, key, nonce_of(0x10));
    auto hello = connector.start();
    // Same nonce and the connector's own vpid: refused as the wrong peer,
    // and even with the right vpid the MAC could only come from the secret.
    std::vector<std::byte> reflected = hello;
    reflected[5] = std::byte{2};
    reflected.resize(kChallengeSize);
    CHECK_THAT(error_of(connector.receive(reflected)), Catch::Contains("answered as vpid 3"));
  }

  SECTION("an acceptor answering as someone other than the vpid dialled") {
    Handshake connector = Handshake::connector(3, 7, key, nonce_of(0x10));
    Handshake wrong = Handshake::acceptor(8, key, nonce_of(0x80));
    auto challenge = wrong.receive(connector.start());
    REQUIRE(challenge);
    CHECK_THAT(error_of(connector.receive(*challenge)),
               Catch::Contains("answered as vpid 8, expected vpid 7"));
  }

  SECTION("a proof from one connection is useless on another") {
    Pair first = make_pair(key, key);
    auto challenge = first.acceptor.receive(first.connector.start());
    auto proof = first.connector.receive(*challenge);
    REQUIRE(proof);
    // A second acceptor draws a fresh nonce, so the recorded proof fails.
    Handshake second = Handshake::acceptor(7, key, nonce_of(0x90));
    REQUIRE(second.receive(Handshake::connector(3, 7, key, nonce_of(0x10)).start()));
    CHECK_THAT(error_of(second.receive(*proof)), Catch::Contains("MAC mismatch"));
  }
}

TEST_CASE("secret keys must have the DVM secret's size", "[handshake]") {
  CHECK_FALSE(SecretKey::from_bytes(std::vector<std::byte>(kDvmSecretSize - 1)));
  CHECK_FALSE(SecretKey::from_bytes(std::vector<std::byte>(kDvmSecretSize + 1)));
  auto key = SecretKey::from_bytes(std::vector<std::byte>(kDvmSecretSize, std::byte{4}));
  REQUIRE(key);
  CHECK(key->bytes()[31] == std::byte{4});
}

TEST_CASE("random nonces and secrets differ between draws", "[handshake][secret]") {
  CHECK(random_handshake_nonce() != random_handshake_nonce());
  auto first = generate_dvm_secret();
  auto second = generate_dvm_secret();
  CHECK(first.size() == kDvmSecretSize);
  CHECK(first != second);
}

TEST_CASE("a secret travels through a pipe intact, and a short one is an error", "[secret]") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  auto secret = generate_dvm_secret();
  REQUIRE(write_secret(fds[1], secret));
  const char trailer[] = "after";
  REQUIRE(::write(fds[1], trailer, 5) == 5);
  auto read_back = read_secret(fds[0]);
  REQUIRE(read_back);
  CHECK(*read_back == secret);
  char rest[8] = {};
  CHECK(::read(fds[0], rest, sizeof rest) == 5);  // nothing past the secret was consumed
  CHECK(std::string(rest, 5) == "after");

  REQUIRE(::write(fds[1], secret.data(), 10) == 10);
  ::close(fds[1]);
  auto short_read = read_secret(fds[0]);
  REQUIRE_FALSE(short_read);
  CHECK_THAT(short_read.error().message, Catch::Contains("short read"));
  CHECK_THAT(short_read.error().message, Catch::Contains("got 10 of 32 bytes"));
  ::close(fds[0]);

  auto bad_fd = read_secret(-1);
  REQUIRE_FALSE(bad_fd);
  CHECK_THAT(bad_fd.error().message, Catch::Contains("cannot read"));
}

TEST_CASE("write_secret refuses a secret of the wrong size", "[secret]") {
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  auto written = write_secret(fds[1], std::vector<std::byte>(5));
  REQUIRE_FALSE(written);
  CHECK_THAT(written.error().message, Catch::Contains("got 5"));
  CHECK_FALSE(write_secret(-1, generate_dvm_secret()));
  ::close(fds[0]);
  ::close(fds[1]);
}
