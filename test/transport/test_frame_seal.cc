// Frame keys from the handshake and the tag every frame carries after it:
// pure, with fixed nonces.
#include <catch2/catch.hpp>

#include <algorithm>

#include "rml/transport/handshake.h"

using namespace grove;

namespace {

constexpr std::size_t kHeader = 64;

struct Established {
  Handshake connector;
  Handshake acceptor;
};

Established establish(std::uint8_t connector_nonce = 0x10) {
  std::vector<std::byte> secret(kDvmSecretSize, std::byte{7});
  SecretKey key = SecretKey::from_bytes(secret).value();
  HandshakeNonce a{}, b{};
  a.fill(std::byte{connector_nonce});
  b.fill(std::byte{0x80});
  Established pair{Handshake::connector(3, 7, key, a), Handshake::acceptor(7, key, b)};
  auto challenge = pair.acceptor.receive(pair.connector.start());
  auto proof = pair.connector.receive(*challenge);
  REQUIRE(pair.acceptor.receive(*proof));
  REQUIRE(pair.connector.established());
  REQUIRE(pair.acceptor.established());
  return pair;
}

std::vector<std::byte> frame_of(std::size_t payload) {
  std::vector<std::byte> frame(kHeader + payload);
  for (std::size_t i = 0; i < frame.size(); ++i)
    frame[i] = static_cast<std::byte>(i * 31 + 5);
  return frame;
}

}  // namespace

TEST_CASE("each side's send key is the other side's receive key, per direction and mode",
          "[seal]") {
  Established pair = establish();
  for (FrameProtection mode : {FrameProtection::integrity, FrameProtection::encryption}) {
    FrameKeys connector = pair.connector.frame_keys(mode);
    FrameKeys acceptor = pair.acceptor.frame_keys(mode);
    CHECK(connector.send == acceptor.receive);
    CHECK(connector.receive == acceptor.send);
    CHECK(connector.send != connector.receive);
  }
  CHECK(pair.connector.frame_keys(FrameProtection::integrity).send !=
        pair.connector.frame_keys(FrameProtection::encryption).send);
  // Another connection (another nonce) has other keys.
  Established other = establish(0x11);
  CHECK(other.connector.frame_keys(FrameProtection::integrity).send !=
        pair.connector.frame_keys(FrameProtection::integrity).send);
  // No keys before the handshake is done.
  Handshake fresh = Handshake::acceptor(
      7, SecretKey::from_bytes(std::vector<std::byte>(kDvmSecretSize)).value(), HandshakeNonce{});
  CHECK(fresh.frame_keys(FrameProtection::integrity).send == FrameKey{});
}

TEST_CASE("sealed frames open in order on the other side, in every mode", "[seal]") {
  Established pair = establish();
  for (FrameProtection mode :
       {FrameProtection::integrity, FrameProtection::encryption, FrameProtection::none}) {
    INFO(frame_protection_name(mode));
    FrameSeal out(mode, pair.connector.frame_keys(mode).send, kHeader);
    FrameSeal in(mode, pair.acceptor.frame_keys(mode).receive, kHeader);
    for (std::size_t payload :
         {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{70000}}) {
      const auto plain = frame_of(payload);
      auto wire = plain;
      out.seal(wire);
      REQUIRE(wire.size() == plain.size() + out.overhead());
      CHECK(std::equal(plain.begin(), plain.begin() + kHeader, wire.begin()));  // header readable
      if (mode == FrameProtection::encryption) {
        if (payload > 8)
          CHECK_FALSE(std::equal(plain.begin() + kHeader, plain.end(), wire.begin() + kHeader));
      } else {
        CHECK(std::equal(plain.begin(), plain.end(), wire.begin()));
      }
      REQUIRE(in.open(wire));
      CHECK(wire == plain);
    }
    CHECK(out.overhead() == (mode == FrameProtection::none ? 0 : kFrameTagSize));
  }
}

TEST_CASE("an altered, replayed, reordered or misdirected frame fails to open", "[seal]") {
  Established pair = establish();
  for (FrameProtection mode : {FrameProtection::integrity, FrameProtection::encryption}) {
    INFO(frame_protection_name(mode));
    FrameKeys keys = pair.connector.frame_keys(mode);
    FrameKeys peer = pair.acceptor.frame_keys(mode);
    for (std::size_t flip : {std::size_t{0}, kHeader - 1, kHeader + 5, kHeader + 40 + 3}) {
      FrameSeal out(mode, keys.send, kHeader), in(mode, peer.receive, kHeader);
      auto wire = frame_of(40);
      out.seal(wire);
      wire[flip] ^= std::byte{0x20};  // header, payload or tag
      CHECK_FALSE(in.open(wire));
    }
    {
      FrameSeal out(mode, keys.send, kHeader), in(mode, peer.receive, kHeader);
      auto first = frame_of(10), second = frame_of(20);
      out.seal(first);
      out.seal(second);
      auto replay = first;
      REQUIRE(in.open(first));
      CHECK_FALSE(in.open(replay));  // frame 0 again where 1 is due
      CHECK(in.open(second));        // a failed open does not advance the count
    }
    {
      FrameSeal out(mode, keys.send, kHeader), in(mode, peer.receive, kHeader);
      auto first = frame_of(10), second = frame_of(20);
      out.seal(first);
      out.seal(second);
      auto opened = in.open(second);
      REQUIRE_FALSE(opened);
      CHECK_THAT(opened.error().message, Catch::Contains("frame 0 failed authentication"));
    }
    {
      // Our own direction's frames reflected back to us fail.
      FrameSeal out(mode, keys.send, kHeader), in(mode, keys.receive, kHeader);
      auto wire = frame_of(10);
      out.seal(wire);
      CHECK_FALSE(in.open(wire));
    }
    FrameSeal in(mode, peer.receive, kHeader);
    std::vector<std::byte> tiny(kFrameTagSize - 1);
    CHECK_FALSE(in.open(tiny));
  }
}

TEST_CASE("rml_frame_protection names parse, and nothing else", "[seal]") {
  CHECK(*parse_frame_protection("integrity") == FrameProtection::integrity);
  CHECK(*parse_frame_protection("encryption") == FrameProtection::encryption);
  CHECK(*parse_frame_protection("none") == FrameProtection::none);
  CHECK_FALSE(parse_frame_protection("aes"));
  CHECK_FALSE(parse_frame_protection(""));
  for (FrameProtection mode :
       {FrameProtection::integrity, FrameProtection::encryption, FrameProtection::none})
    CHECK(*parse_frame_protection(frame_protection_name(mode)) == mode);
}
