// The TCP transport over real sockets on 127.0.0.1: several transports in
// one process sharing one main event base.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <map>
#include <thread>

#include "harness.h"
#include "rml/transport/handshake.h"
#include "util/standard_params.h"

using namespace grove;
using namespace grove::testing;

namespace {

constexpr std::size_t kFourMegabytes = std::size_t{4} << 20;

std::uint64_t op_id_of(const std::vector<std::byte>& frame) {
  auto view = decode_frame(frame, std::uint64_t{1} << 30);
  REQUIRE(view);
  return view->header.op_id;
}

// Every node sends `count` frames to every other node, frame `big_index`
// being 4 MB, all queued before the loop runs (so every connection is still
// being dialled). Each receiver must get each sender's frames complete, in
// order, byte for byte.
void exchange_in_order(int worker_threads,
                       FrameProtection protection = FrameProtection::integrity) {
  EventBasePtr base = make_base();
  NodeOptions options;
  options.worker_threads = worker_threads;
  options.protection = protection;
  Node a(base.get(), 0, options), b(base.get(), 1, options), c(base.get(), 2, options);
  std::vector<Node*> nodes{&a, &b, &c};
  connect_all(nodes);

  constexpr std::uint64_t kCount = 40;
  constexpr std::uint64_t kBigIndex = 17;
  auto payload_size = [](std::uint64_t op) { return op == kBigIndex ? kFourMegabytes : op * 5; };
  for (Node* sender : nodes) {
    for (Node* target : nodes) {
      if (target == sender) continue;
      for (std::uint64_t op = 0; op < kCount; ++op) {
        auto frame = make_frame(sender->vpid(), 9, TopologyKind::routing, op, payload_size(op));
        REQUIRE(sender->transport().send(target->vpid(), std::move(frame), SendPath::direct));
      }
    }
  }
  REQUIRE(run_until(base.get(), [&] {
    for (Node* node : nodes) {
      if (node->received.size() < 2 * kCount) return false;
    }
    return true;
  }));
  run_for(base.get(), 20ms);  // nothing beyond the expected frames arrives

  const auto main_thread = std::this_thread::get_id();
  for (Node* receiver : nodes) {
    INFO("receiver vpid " << receiver->vpid());
    CHECK(receiver->received.size() == 2 * kCount);
    CHECK(receiver->lost.empty());
    std::map<Vpid, std::uint64_t> next_op;
    for (const Received& got : receiver->received) {
      std::uint64_t op = op_id_of(got.frame);
      REQUIRE(op == next_op[got.from]);
      ++next_op[got.from];
      CHECK(got.frame == make_frame(got.from, 9, TopologyKind::routing, op, payload_size(op)));
    }
    CHECK(next_op.size() == 2);
    CHECK(receiver->callback_threads.size() == 2 * kCount);
    for (const std::thread::id& id : receiver->callback_threads)
      REQUIRE(id == main_thread);
    // All dialled at once: one connection per direction with each peer.
    CHECK(receiver->transport().connection_count() == 4);
  }
}

}  // namespace

TEST_CASE("frames between three peers arrive complete and in order, a 4 MB frame among them",
          "[transport]") {
  exchange_in_order(/*worker_threads=*/0);
}

TEST_CASE("with two worker threads every frame still arrives in order, on the main thread",
          "[transport][workers]") {
  exchange_in_order(/*worker_threads=*/2);
}

TEST_CASE("encrypted and unprotected frames arrive as complete and in order", "[transport][seal]") {
  exchange_in_order(/*worker_threads=*/0, FrameProtection::encryption);
  exchange_in_order(/*worker_threads=*/2, FrameProtection::encryption);
  exchange_in_order(/*worker_threads=*/0, FrameProtection::none);
}

TEST_CASE("a reply travels on the connection the peer opened", "[transport]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0), b(base.get(), 1);
  connect_all({&a, &b});
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 1, 10), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 1; }));
  REQUIRE(b.transport().send(0, make_frame(1, 1, TopologyKind::routing, 2, 10), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return a.received.size() == 1; }));
  CHECK(a.received[0].from == 1);
  CHECK(op_id_of(a.received[0].frame) == 2);
  CHECK(a.transport().connection_count() == 1);
  CHECK(b.transport().connection_count() == 1);
}

TEST_CASE("a peer known only by the connection it opened can be answered", "[transport]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0), b(base.get(), 1);
  REQUIRE(a.transport().add_peer(1, b.endpoint()));  // b does not know where a listens
  CHECK_FALSE(
      b.transport().send(0, make_frame(1, 1, TopologyKind::routing, 0, 0), SendPath::direct));
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 1, 3), SendPath::direct));
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 1; }));
  REQUIRE(b.transport().send(0, make_frame(1, 1, TopologyKind::routing, 2, 3), SendPath::direct));
  REQUIRE(run_until(base.get(), [&] { return a.received.size() == 1; }));
  CHECK(op_id_of(a.received[0].frame) == 2);
}

TEST_CASE("a send to self is delivered by the main loop without a socket", "[transport]") {
  EventBasePtr base = make_base();
  NodeOptions options;
  options.listen = false;
  Node solo(base.get(), 4, options);
  std::size_t delivered_inside_send = 0;
  solo.on_frame_hook = [&](Vpid, const std::vector<std::byte>&) {
    if (solo.received.empty()) {
      // A send from inside on_frame is not delivered re-entrantly either.
      REQUIRE(solo.transport().send(4, make_frame(4, 2, TopologyKind::release, 2, 1),
                                    SendPath::direct));
      delivered_inside_send = solo.received.size();
    }
  };
  REQUIRE(
      solo.transport().send(4, make_frame(4, 2, TopologyKind::release, 1, 8), SendPath::direct));
  CHECK(solo.received.empty());
  REQUIRE(run_until(base.get(), [&] { return solo.received.size() == 2; }));
  CHECK(delivered_inside_send == 0);
  CHECK(solo.received[0].from == 4);
  CHECK(op_id_of(solo.received[0].frame) == 1);
  CHECK(op_id_of(solo.received[1].frame) == 2);
  CHECK(solo.transport().connection_count() == 0);
  const TransportCounters& counters = solo.transport().counters();
  CHECK(counters.loopback == TrafficCount{2, 64 + 8 + 64 + 1});
  CHECK(counters.sent.total() == TrafficCount{});
  CHECK(counters.received.total() == TrafficCount{});
}

TEST_CASE("garbage on a raw socket closes that connection, logged, and the transport carries on",
          "[transport][hostile]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0), b(base.get(), 1);
  connect_all({&a, &b});

  RawClient garbage(b.endpoint());
  std::string text = "GET / HTTP/1.1\r\nHost: grove\r\n\r\n and some more bytes after it";
  garbage.write_bytes(std::as_bytes(std::span(text)));
  REQUIRE(run_until(base.get(), [&] { return !garbage.poll_read(); }));
  CHECK(garbage.bytes_read().empty());  // not even a challenge went back
  std::string log = b.log_text();
  CHECK_THAT(log, Catch::Contains("error: rml: closing connection with unauthenticated peer " +
                                  garbage.local_address()));
  CHECK_THAT(log, Catch::Contains("bad handshake magic"));

  for (std::uint64_t op = 0; op < 3; ++op) {
    REQUIRE(
        a.transport().send(1, make_frame(0, 5, TopologyKind::release, op, 100), SendPath::direct));
  }
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 3; }));
  CHECK(b.lost.empty());
  CHECK(a.lost.empty());
}

TEST_CASE("frames pipelined behind a forged proof are never delivered", "[transport][hostile]") {
  EventBasePtr base = make_base();
  Node b(base.get(), 1);
  RawClient impostor(b.endpoint());
  SecretKey wrong = SecretKey::from_bytes(test_secret(9)).value();
  Handshake handshake = Handshake::connector(7, 1, wrong, random_handshake_nonce());
  std::vector<std::byte> bytes = handshake.start();
  // A well-formed PROOF with a MAC of zeros, then a valid frame from "vpid 7".
  std::vector<std::byte> proof(kProofSize, std::byte{0});
  std::copy(bytes.begin(), bytes.begin() + kHandshakePreambleSize, proof.begin());
  proof[5] = std::byte{3};
  bytes.insert(bytes.end(), proof.begin(), proof.end());
  auto frame = make_frame(7, 1, TopologyKind::routing, 1, 10);
  bytes.insert(bytes.end(), frame.begin(), frame.end());
  impostor.write_bytes(bytes);

  REQUIRE(run_until(base.get(), [&] { return !impostor.poll_read(); }));
  // (Whether the CHALLENGE can still be read depends on the reset that
  // closing with unread bytes causes; the log shows the PROOF was judged.)
  run_for(base.get(), 20ms);
  CHECK(b.received.empty());
  CHECK(b.lost.empty());
  CHECK(b.transport().counters().received.total() == TrafficCount{});
  CHECK_THAT(b.log_text(), Catch::Contains("MAC mismatch: peer claiming vpid 7"));
}

TEST_CASE("an authenticated peer whose frame lies about its sender is cut off",
          "[transport][hostile]") {
  EventBasePtr base = make_base();
  Node b(base.get(), 1);
  RawClient client(b.endpoint());
  SecretKey key = SecretKey::from_bytes(test_secret(1)).value();
  Handshake handshake = Handshake::connector(7, 1, key, random_handshake_nonce());
  client.write_bytes(handshake.start());
  REQUIRE(run_until(base.get(), [&] {
    client.poll_read();
    return client.bytes_read().size() >= kChallengeSize || client.closed();
  }));
  REQUIRE(client.bytes_read().size() == kChallengeSize);
  auto proof = handshake.receive(client.bytes_read());
  REQUIRE(proof);
  std::vector<std::byte> bytes = *proof;
  // Sealed as a real peer seals them: the lie is in a frame that authenticates.
  FrameSeal seal(FrameProtection::integrity, handshake.frame_keys(FrameProtection::integrity).send,
                 kFrameHeaderSize);
  const auto good = make_frame(7, 1, TopologyKind::routing, 1, 10);
  auto sealed_good = good;
  auto liar = make_frame(8, 1, TopologyKind::routing, 2, 10);
  seal.seal(sealed_good);
  seal.seal(liar);
  bytes.insert(bytes.end(), sealed_good.begin(), sealed_good.end());
  bytes.insert(bytes.end(), liar.begin(), liar.end());
  client.write_bytes(bytes);

  REQUIRE(run_until(base.get(), [&] { return !client.poll_read(); }));
  REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
  REQUIRE(b.received.size() == 1);
  CHECK(b.received[0].from == 7);
  CHECK(b.received[0].frame == good);
  CHECK(b.lost[0] == 7);
  CHECK_THAT(b.log_text(),
             Catch::Contains("sender field says vpid 8 on a connection authenticated as vpid 7"));
}

namespace {

// A raw client that has completed the handshake with `server` as vpid 7,
// and seals frames as vpid 7's transport would.
struct AuthenticatedClient {
  AuthenticatedClient(event_base* base, const Endpoint& server)
      : client(server),
        handshake(Handshake::connector(7, 1, SecretKey::from_bytes(test_secret(1)).value(),
                                       random_handshake_nonce())) {
    client.write_bytes(handshake.start());
    REQUIRE(run_until(base, [&] {
      client.poll_read();
      return client.bytes_read().size() >= kChallengeSize || client.closed();
    }));
    auto proof = handshake.receive(client.bytes_read());
    REQUIRE(proof);
    client.write_bytes(*proof);
    seal = std::make_unique<FrameSeal>(FrameProtection::integrity,
                                       handshake.frame_keys(FrameProtection::integrity).send,
                                       kFrameHeaderSize);
  }
  std::vector<std::byte> sealed(std::uint64_t op) {
    auto frame = make_frame(7, 1, TopologyKind::routing, op, 40);
    seal->seal(frame);
    return frame;
  }
  RawClient client;
  Handshake handshake;
  std::unique_ptr<FrameSeal> seal;
};

}  // namespace

TEST_CASE("a frame altered on the way fails its tag and closes the connection",
          "[transport][hostile][seal]") {
  EventBasePtr base = make_base();
  Node b(base.get(), 1);
  AuthenticatedClient peer(base.get(), b.endpoint());
  auto first = peer.sealed(0);
  auto second = peer.sealed(1);
  second[kFrameHeaderSize + 3] ^= std::byte{1};  // one payload bit
  peer.client.write_bytes(first);
  peer.client.write_bytes(second);
  REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
  REQUIRE(b.received.size() == 1);
  CHECK(b.received[0].frame == make_frame(7, 1, TopologyKind::routing, 0, 40));
  CHECK_THAT(b.log_text(), Catch::Contains("frame 1 failed authentication"));
}

TEST_CASE("a replayed, a reordered or an unsealed frame is refused", "[transport][hostile][seal]") {
  EventBasePtr base = make_base();
  Node b(base.get(), 1);
  SECTION("replayed") {
    AuthenticatedClient peer(base.get(), b.endpoint());
    auto first = peer.sealed(0);
    peer.client.write_bytes(first);
    peer.client.write_bytes(first);
    REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
    CHECK(b.received.size() == 1);
  }
  SECTION("reordered") {
    AuthenticatedClient peer(base.get(), b.endpoint());
    auto first = peer.sealed(0);
    auto second = peer.sealed(1);
    peer.client.write_bytes(second);
    peer.client.write_bytes(first);
    REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
    CHECK(b.received.empty());
  }
  SECTION("unsealed, as before frames carried tags") {
    AuthenticatedClient peer(base.get(), b.endpoint());
    auto plain = make_frame(7, 1, TopologyKind::routing, 0, 40);
    auto more = make_frame(7, 1, TopologyKind::routing, 1, 40);
    peer.client.write_bytes(plain);
    peer.client.write_bytes(more);
    REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
    CHECK(b.received.empty());
  }
  CHECK_THAT(b.log_text(), Catch::Contains("failed authentication"));
}

TEST_CASE("peers that disagree on rml_frame_protection deliver nothing and say why",
          "[transport][seal]") {
  EventBasePtr base = make_base();
  NodeOptions encrypting;
  encrypting.protection = FrameProtection::encryption;
  Node a(base.get(), 0), b(base.get(), 1, encrypting);
  connect_all({&a, &b});
  REQUIRE(a.transport().send(1, make_frame(0, 5, TopologyKind::release, 0, 100), SendPath::direct));
  REQUIRE(run_until(base.get(), [&] { return b.lost.size() == 1; }));
  CHECK(b.received.empty());
  CHECK_THAT(b.log_text(), Catch::Contains("rml_frame_protection differ"));
}

TEST_CASE("a connection that never completes the handshake is closed after the timeout",
          "[transport][hostile]") {
  EventBasePtr base = make_base();
  NodeOptions options;
  options.handshake_timeout_ms = 100;
  Node b(base.get(), 1, options);
  RawClient silent(b.endpoint());
  auto started = std::chrono::steady_clock::now();
  REQUIRE(run_until(
      base.get(), [&] { return !silent.poll_read(); }, 5s));
  CHECK(std::chrono::steady_clock::now() - started >=
        50ms);  // libevent measures from its cached loop time
  CHECK_THAT(b.log_text(), Catch::Contains("handshake timed out after 100 ms"));
}

TEST_CASE("peers holding different secrets refuse each other and deliver nothing",
          "[transport][hostile]") {
  EventBasePtr base = make_base();
  NodeOptions intruder_options;
  intruder_options.secret = test_secret(2);
  Node a(base.get(), 0), w(base.get(), 6, intruder_options);
  connect_all({&a, &w});
  REQUIRE(a.transport().send(6, make_frame(0, 1, TopologyKind::routing, 1, 10), SendPath::routed));
  REQUIRE(w.transport().send(0, make_frame(6, 1, TopologyKind::routing, 1, 10), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 1 && w.lost.size() == 1; }));
  run_for(base.get(), 50ms);
  CHECK(a.lost == std::vector<Vpid>{6});
  CHECK(w.lost == std::vector<Vpid>{0});
  CHECK(a.received.empty());
  CHECK(w.received.empty());
  CHECK(a.transport().counters().received.total() == TrafficCount{});
  // Each side, as the dialler, finds the other's challenge MAC wrong.
  std::string a_log = a.log_text();
  CHECK_THAT(a_log,
             Catch::Contains("closing connection with vpid 6 at " + w.endpoint().to_string() +
                             ": handshake failed: handshake MAC mismatch"));
  CHECK_THAT(w.log_text(), Catch::Contains("handshake MAC mismatch: vpid 0 did not prove"));
  // And as the acceptor sees the dialler hang up mid-handshake.
  CHECK_THAT(a_log, Catch::Contains("closed by the peer during the handshake"));
  CHECK(a.transport().connection_count() == 0);
}

TEST_CASE("an oversized frame closes the connection; the sender refuses one over its own limit",
          "[transport][hostile]") {
  EventBasePtr base = make_base();
  NodeOptions big, small;
  big.max_payload = std::uint64_t{8} << 20;
  small.max_payload = std::uint64_t{1} << 20;
  Node a(base.get(), 0, big), b(base.get(), 1, small);
  connect_all({&a, &b});

  auto too_big_for_a =
      a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 9, 9 << 20), SendPath::direct);
  REQUIRE_FALSE(too_big_for_a);
  CHECK_THAT(too_big_for_a.error().message, Catch::Contains("oversized frame"));

  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 0, 10), SendPath::direct));
  REQUIRE(
      a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 1, 2 << 20), SendPath::direct));
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 2, 10), SendPath::direct));
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 1 && b.lost.size() == 1; }));
  run_for(base.get(), 20ms);
  REQUIRE(b.received.size() == 1);
  CHECK(op_id_of(b.received[0].frame) == 0);
  CHECK(a.lost == std::vector<Vpid>{1});
  CHECK(b.lost == std::vector<Vpid>{0});
  CHECK_THAT(b.log_text(), Catch::Contains("bad frame: oversized frame: payload of 2097152 bytes "
                                           "exceeds the limit of 1048576"));
}

TEST_CASE("a peer whose transport goes away is reported lost exactly once", "[transport]") {
  EventBasePtr base = make_base();
  auto both_directions = GENERATE(false, true);
  INFO("both sides dialled at once: " << both_directions);
  Node a(base.get(), 0);
  auto b = std::make_unique<Node>(base.get(), 1);
  connect_all({&a, b.get()});
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 1, 4), SendPath::routed));
  if (!both_directions) REQUIRE(run_until(base.get(), [&] { return b->received.size() == 1; }));
  REQUIRE(b->transport().send(0, make_frame(1, 1, TopologyKind::routing, 1, 4), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return a.received.size() == 1 && b->received.size() == 1; }));
  CHECK(a.transport().connection_count() == (both_directions ? 2u : 1u));

  b->destroy_transport();
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 1; }));
  run_for(base.get(), 50ms);
  CHECK(a.lost == std::vector<Vpid>{1});
  CHECK(a.transport().counters().peers_lost == 1);
  CHECK(a.transport().connection_count() == 0);

  // A later send dials again; with nobody listening that is a new loss.
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 2, 4), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 2; }));
  CHECK_THAT(a.log_text(), Catch::Contains("connect failed: Connection refused"));
}

TEST_CASE("losses are reported on the main thread when workers carry the sockets",
          "[transport][workers]") {
  EventBasePtr base = make_base();
  NodeOptions options;
  options.worker_threads = 2;
  Node a(base.get(), 0, options);
  auto b = std::make_unique<Node>(base.get(), 1, options);
  connect_all({&a, b.get()});
  REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::routing, 1, 4), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return b->received.size() == 1; }));
  b.reset();
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 1; }));
  REQUIRE(a.callback_threads.size() == 1);
  CHECK(a.callback_threads[0] == std::this_thread::get_id());
}

TEST_CASE("dialling an address where nobody listens reports the peer lost", "[transport]") {
  EventBasePtr base = make_base();
  Endpoint nowhere;
  {
    Node placeholder(base.get(), 9);  // binds a free port, then releases it
    nowhere = placeholder.endpoint();
  }
  Node a(base.get(), 0);
  REQUIRE(a.transport().add_peer(5, nowhere));
  REQUIRE(a.transport().send(5, make_frame(0, 1, TopologyKind::routing, 1, 4), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return a.lost.size() == 1; }));
  CHECK(a.lost[0] == 5);
  CHECK_THAT(a.log_text(), Catch::Contains("closing connection with vpid 5 at " +
                                           nowhere.to_string() + ": connect failed"));
}

namespace {

// A TCP port that accepts connections (the kernel completes them) and never
// says or reads a word: a peer that hangs before the handshake.
class SilentListener {
 public:
  SilentListener() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(fd_.get(), 8) == 0);
    socklen_t length = sizeof address;
    REQUIRE(::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length) == 0);
    endpoint_ = Endpoint::parse("127.0.0.1:" + std::to_string(ntohs(address.sin_port))).value();
  }
  const Endpoint& endpoint() const { return endpoint_; }

 private:
  Fd fd_;
  Endpoint endpoint_;
};

NodeOptions small_send_queue() {
  NodeOptions options;
  options.send_queue_limit = 1 << 20;
  options.send_queue_timeout_ms = 200;
  return options;
}

}  // namespace

TEST_CASE("a send queue over twice its bound drops the peer at once", "[transport][queue]") {
  EventBasePtr base = make_base();
  SilentListener silent;
  Node a(base.get(), 0, small_send_queue());
  REQUIRE(a.transport().add_peer(5, silent.endpoint()));
  // Waiting for a handshake that never comes, every frame stays queued.
  for (std::uint64_t op = 0; op < 3; ++op) {
    REQUIRE(a.transport().send(5, make_frame(0, 1, TopologyKind::release, op, 1 << 20),
                               SendPath::direct));
  }
  REQUIRE(run_until(
      base.get(), [&] { return a.lost.size() == 1; }, 2s));
  CHECK(a.lost[0] == 5);
  CHECK_THAT(a.log_text(), Catch::Contains("over twice rml_send_queue_limit (1048576): the peer "
                                           "is not reading"));
}

TEST_CASE("a send queue over its bound past the timeout drops the peer", "[transport][queue]") {
  EventBasePtr base = make_base();
  SilentListener silent;
  Node a(base.get(), 0, small_send_queue());
  REQUIRE(a.transport().add_peer(5, silent.endpoint()));
  for (std::uint64_t op = 0; op < 2; ++op) {
    REQUIRE(a.transport().send(5, make_frame(0, 1, TopologyKind::release, op, 768 << 10),
                               SendPath::direct));
  }
  run_for(base.get(), 100ms);
  CHECK(a.lost.empty());  // over the limit, but not yet for 200 ms
  REQUIRE(run_until(
      base.get(), [&] { return a.lost.size() == 1; }, 2s));
  CHECK_THAT(a.log_text(), Catch::Contains("over rml_send_queue_limit (1048576), for 200 ms: the "
                                           "peer is not reading"));
}

TEST_CASE("a queue that goes over its bound and drains in time keeps the peer",
          "[transport][queue]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0, small_send_queue()), b(base.get(), 1, small_send_queue());
  connect_all({&a, &b});
  for (std::uint64_t op = 0; op < 2; ++op) {
    REQUIRE(a.transport().send(1, make_frame(0, 1, TopologyKind::release, op, 768 << 10),
                               SendPath::direct));
  }
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 2; }));
  run_for(base.get(), 400ms);  // twice the timeout
  CHECK(a.lost.empty());
  CHECK(b.lost.empty());
}

TEST_CASE("an authenticated peer that stops reading is dropped while releases keep coming",
          "[transport][queue]") {
  EventBasePtr base = make_base();
  Node b(base.get(), 1, small_send_queue());
  AuthenticatedClient stopped(base.get(), b.endpoint());  // never reads again
  REQUIRE(run_until(base.get(), [&] { return b.transport().connection_count() == 1; }));
  // Releases of 256 KB to it, one every few milliseconds: the kernel's socket
  // buffers fill, then the queue, which may not grow past twice its bound.
  std::uint64_t op = 0;
  const bool dropped = run_until(
      base.get(),
      [&] {
        if (b.lost.empty() && op < 4000) {
          (void)b.transport().send(7, make_frame(1, 1, TopologyKind::release, op++, 256 << 10),
                                   SendPath::direct);
        }
        return !b.lost.empty();
      },
      20s);
  REQUIRE(dropped);
  CHECK(b.lost[0] == 7);
  CHECK_THAT(b.log_text(), Catch::Contains("the peer is not reading"));
}

TEST_CASE("counters equal the frames and bytes exchanged", "[transport][counters]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0), b(base.get(), 1);
  connect_all({&a, &b});
  for (std::uint64_t op = 0; op < 3; ++op) {
    REQUIRE(
        a.transport().send(1, make_frame(0, 1, TopologyKind::routing, op, 10), SendPath::routed));
  }
  for (std::uint64_t op = 0; op < 2; ++op) {
    REQUIRE(
        a.transport().send(1, make_frame(0, 2, TopologyKind::release, op, 100), SendPath::direct));
  }
  REQUIRE(a.transport().send(0, make_frame(0, 2, TopologyKind::release, 9, 1), SendPath::direct));
  REQUIRE(b.transport().send(0, make_frame(1, 7, TopologyKind::routing, 0, 0), SendPath::routed));
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 5 && a.received.size() == 2; }));
  run_for(base.get(), 20ms);

  const TransportCounters& sent_side = a.transport().counters();
  CHECK(sent_side.sent.total() == TrafficCount{5, 3 * 74 + 2 * 164});
  CHECK(sent_side.sent.by_key().size() == 2);
  CHECK(sent_side.sent.of(1, TopologyKind::routing) == TrafficCount{3, 222});
  CHECK(sent_side.sent.of(2, TopologyKind::release) == TrafficCount{2, 328});
  CHECK(sent_side.received.total() == TrafficCount{1, 64});
  CHECK(sent_side.received.by_key().size() == 1);
  CHECK(sent_side.received.of(7, TopologyKind::routing) == TrafficCount{1, 64});
  CHECK(sent_side.loopback == TrafficCount{1, 65});
  CHECK(sent_side.peers_lost == 0);

  const TransportCounters& received_side = b.transport().counters();
  CHECK(received_side.received.total() == TrafficCount{5, 550});
  CHECK(received_side.received == sent_side.sent);
  CHECK(received_side.sent.total() == TrafficCount{1, 64});
  CHECK(received_side.sent == sent_side.received);
  CHECK(received_side.loopback == TrafficCount{});

  std::string text = format_counters(sent_side);
  CHECK_THAT(text, Catch::Contains("sent: 5 frames 550 bytes\n"));
  CHECK_THAT(text, Catch::Contains("sent control tag 2 topology release: 2 frames 328 bytes\n"));
  CHECK_THAT(text, Catch::Contains("received control tag 7 topology routing: 1 frames 64 bytes\n"));
  CHECK_THAT(text, Catch::Contains("loopback: 1 frames 65 bytes\n"));
}

TEST_CASE("rml_base_verbose 2 names the path of every send", "[transport][verbose]") {
  EventBasePtr base = make_base();
  NodeOptions loud, quiet;
  loud.rml_verbose = 2;
  Node a(base.get(), 0, loud), b(base.get(), 5, quiet);
  connect_all({&a, &b});
  REQUIRE(a.transport().send(5, make_frame(0, 3, TopologyKind::release, 1, 33), SendPath::direct));
  REQUIRE(a.transport().send(5, make_frame(0, 1, TopologyKind::routing, 2, 0), SendPath::routed));
  REQUIRE(a.transport().send(5, make_frame(0, 1, TopologyKind::routing, 3, 1), SendPath::relay));
  REQUIRE(a.transport().send(0, make_frame(0, 4, TopologyKind::routing, 4, 2), SendPath::direct));
  REQUIRE(b.transport().send(0, make_frame(5, 3, TopologyKind::release, 1, 33), SendPath::direct));
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 3 && a.received.size() == 2; }));

  std::string text = a.log_text();
  CHECK(count_occurrences(
            text,
            "rml: RML-SEND-DIRECT to 5 tag fence-release topology release bytes 97 control\n") ==
        1);
  CHECK(count_occurrences(
            text, "rml: RML-SEND-ROUTED to 5 tag membership topology routing bytes 64 control\n") ==
        1);
  CHECK(count_occurrences(
            text, "rml: RML-SEND-RELAY to 5 tag membership topology routing bytes 65 control\n") ==
        1);
  CHECK(count_occurrences(
            text,
            "rml: RML-SEND-DIRECT to 0 tag group-release topology routing bytes 66 control\n") ==
        1);
  CHECK(count_occurrences(text, "RML-SEND-") == 4);
  CHECK(count_occurrences(b.log_text(), "RML-SEND-") == 0);
}

TEST_CASE("the transport stamps its own vpid as the frame's sender", "[transport]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0), b(base.get(), 1);
  connect_all({&a, &b});
  REQUIRE(a.transport().send(1, make_frame(99, 1, TopologyKind::routing, 1, 5), SendPath::relay));
  REQUIRE(run_until(base.get(), [&] { return b.received.size() == 1; }));
  auto view = decode_frame(b.received[0].frame, 1 << 20);
  REQUIRE(view);
  CHECK(view->header.sender == 0);
  CHECK(view->header.origin == 99);
}

TEST_CASE("bad arguments are errors, not crashes", "[transport]") {
  EventBasePtr base = make_base();
  Node a(base.get(), 0);

  auto unknown =
      a.transport().send(3, make_frame(0, 1, TopologyKind::routing, 1, 1), SendPath::direct);
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message, Catch::Contains("unknown peer vpid 3"));

  std::vector<std::byte> junk(80, std::byte{0x42});
  auto malformed = a.transport().send(0, junk, SendPath::direct);
  REQUIRE_FALSE(malformed);
  CHECK_THAT(malformed.error().message, Catch::Contains("bad frame magic"));
  auto truncated = make_frame(0, 1, TopologyKind::routing, 1, 10);
  truncated.pop_back();
  CHECK_FALSE(a.transport().send(0, truncated, SendPath::direct));

  CHECK_FALSE(a.transport().add_peer(3, Endpoint{"localhost", 5000}));
  CHECK_FALSE(a.transport().listen("not-an-address", 0));
  CHECK_FALSE(Endpoint::parse("127.0.0.1"));
  CHECK_FALSE(Endpoint::parse("127.0.0.1:65536"));
  CHECK_FALSE(Endpoint::parse("::1:5"));
  CHECK(Endpoint::parse("[::1]:5").value() == Endpoint{"::1", 5});
  CHECK(Endpoint::parse("10.0.0.7:4711").value().to_string() == "10.0.0.7:4711");
  CHECK(Endpoint{"::1", 5}.to_string() == "[::1]:5");

  ParamRegistry params;
  register_standard_params(params);
  Log log("test", params, stderr);
  TcpTransportCallbacks callbacks{[](Vpid, std::vector<std::byte>) {}, [](Vpid) {}};
  TcpTransportConfig short_secret{0, std::vector<std::byte>(16), 1 << 20, 0, &log, 1000};
  CHECK_FALSE(TcpTransport::create(base.get(), short_secret, callbacks));
  TcpTransportConfig too_many_threads{0, test_secret(1), 1 << 20, 300, &log, 1000};
  CHECK_FALSE(TcpTransport::create(base.get(), too_many_threads, callbacks));
  TcpTransportConfig no_log{0, test_secret(1), 1 << 20, 0, nullptr, 1000};
  CHECK_FALSE(TcpTransport::create(base.get(), no_log, callbacks));
  TcpTransportConfig fine{0, test_secret(1), 1 << 20, 0, &log, 1000};
  CHECK_FALSE(TcpTransport::create(base.get(), fine, TcpTransportCallbacks{}));
  CHECK(TcpTransport::create(base.get(), fine, callbacks));
}
