// DaemonRuntime's routing by owner, between two real runtimes on loopback:
// a control frame, a broadcast and a fence's end each reach the component
// that claimed its tag or scope, nothing else does, and a claim given back
// (by its owner, from inside its own handler, or after the runtime went)
// is safe.
#include <catch2/catch.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "daemon/daemon_runtime.h"
#include "os/event_loop.h"
#include "os/timer.h"
#include "rml/transport/dvm_secret.h"
#include "rml/transport/tcp_transport.h"
#include "util/param_registry.h"
#include "util/standard_params.h"

using namespace grove;

namespace {

Bytes bytes_of(std::string_view text) {
  Bytes out;
  for (char c : text)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

struct TwoDaemons {
  TwoDaemons() {
    register_standard_params(params);
    REQUIRE(enable_event_threads());
    loop.emplace();
    log = std::make_unique<Log>("test", params, sink.get());
    const std::vector<std::byte> secret = generate_dvm_secret();
    for (Vpid vpid : {Vpid{0}, Vpid{1}}) {
      RuntimeHooks hooks;
      hooks.heard_from = [this, vpid](Vpid) { ++frames_heard[vpid]; };
      auto runtime = DaemonRuntime::create(loop->base(), params, *log,
                                           RuntimeOptions{vpid, 2, secret, "127.0.0.1"}, hooks);
      REQUIRE(runtime);
      runtimes[vpid] = std::move(*runtime);
    }
    auto first = runtimes[0]->listen();
    auto second = runtimes[1]->listen();
    REQUIRE(first);
    REQUIRE(second);
    REQUIRE(runtimes[0]->add_peer(1, *second));
    REQUIRE(runtimes[1]->add_peer(0, *first));
  }
  ~TwoDaemons() {
    for (auto& runtime : runtimes)
      runtime.reset();
    loop.reset();
  }

  // Runs the loop until `done` holds (true) or 10 s pass (false).
  bool pump(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    Timer check(loop->base(), [&] {
      if (done() || std::chrono::steady_clock::now() > deadline) loop->exit();
    });
    check.arm_every(2);
    loop->run();
    return done();
  }

  ParamRegistry params;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> sink{std::tmpfile(), &std::fclose};
  std::unique_ptr<Log> log;
  std::optional<EventLoop> loop;
  std::array<std::unique_ptr<DaemonRuntime>, 2> runtimes;
  std::array<int, 2> frames_heard{0, 0};
};

}  // namespace

TEST_CASE("a control frame reaches the owner of its tag, and only while it owns it",
          "[tag_routing]") {
  TwoDaemons dvm;
  std::vector<std::pair<Vpid, Bytes>> got;
  TagClaim claim = dvm.runtimes[1]->own_control(
      {daemon_tags::help}, [&](Vpid from, std::uint16_t tag, const Bytes& payload) {
        CHECK(tag == daemon_tags::help);
        got.emplace_back(from, payload);
      });
  dvm.runtimes[0]->send_control(1, daemon_tags::help, bytes_of("hello"));
  REQUIRE(dvm.pump([&] { return got.size() == 1; }));
  CHECK(got[0].first == 0);
  CHECK(got[0].second == bytes_of("hello"));
  CHECK(dvm.frames_heard[1] == 1);  // every frame is a sign of life first

  // Given back: the next frame arrives (heard) and goes to nobody.
  claim = TagClaim();
  dvm.runtimes[0]->send_control(1, daemon_tags::help, bytes_of("again"));
  REQUIRE(dvm.pump([&] { return dvm.frames_heard[1] == 2; }));
  CHECK(got.size() == 1);
}

TEST_CASE("a broadcast reaches its tag's owner on each daemon", "[tag_routing]") {
  TwoDaemons dvm;
  int delivered = 0;
  TagClaim claim = dvm.runtimes[1]->own_broadcasts({daemon_tags::counters_request},
                                                   [&](const DeliverBroadcast& deliver) {
                                                     CHECK(*deliver.payload == bytes_of("all"));
                                                     ++delivered;
                                                   });
  dvm.runtimes[0]->broadcast(daemon_tags::counters_request, bytes_of("all"));
  REQUIRE(dvm.pump([&] { return delivered == 1; }));
}

TEST_CASE("a fence's end reaches the owner of its signature's scope", "[tag_routing]") {
  TwoDaemons dvm;
  std::array<std::vector<std::string>, 2> pmix_ends, bench_ends;
  std::vector<TagClaim> claims;
  for (Vpid vpid : {Vpid{0}, Vpid{1}}) {
    claims.push_back(dvm.runtimes[vpid]->own_fences("pmix:", [&, vpid](const FenceDone& done) {
      CHECK(done.status == FenceStatus::ok);
      pmix_ends[vpid].push_back(done.key.signature);
    }));
    claims.push_back(dvm.runtimes[vpid]->own_fences("bench-", [&, vpid](const FenceDone& done) {
      bench_ends[vpid].push_back(done.key.signature);
    }));
  }
  for (Vpid vpid : {Vpid{0}, Vpid{1}}) {
    dvm.runtimes[vpid]->contribute(FenceRequest{"pmix:job:*", VpidSet::span(0, 1), {}});
    dvm.runtimes[vpid]->contribute(FenceRequest{"bench-barrier", VpidSet::span(0, 1), {}});
    dvm.runtimes[vpid]->contribute(FenceRequest{"nobody's", VpidSet::span(0, 1), {}});
  }
  REQUIRE(dvm.pump([&] { return pmix_ends[0].size() + pmix_ends[1].size() == 2; }));
  REQUIRE(dvm.pump([&] { return bench_ends[0].size() + bench_ends[1].size() == 2; }));
  for (Vpid vpid : {Vpid{0}, Vpid{1}}) {
    CHECK(pmix_ends[vpid] == std::vector<std::string>{"pmix:job:*"});
    CHECK(bench_ends[vpid] == std::vector<std::string>{"bench-barrier"});
  }
}

TEST_CASE("a claim may end inside its own handler, and may outlive its runtime", "[tag_routing]") {
  TwoDaemons dvm;
  int calls = 0;
  TagClaim claim;
  claim = dvm.runtimes[1]->own_control({daemon_tags::help}, [&](Vpid, std::uint16_t, const Bytes&) {
    ++calls;
    claim = TagClaim();  // the handler runs on
    CHECK(calls == 1);
  });
  dvm.runtimes[0]->send_control(1, daemon_tags::help, bytes_of("one"));
  dvm.runtimes[0]->send_control(1, daemon_tags::help, bytes_of("two"));
  REQUIRE(dvm.pump([&] { return dvm.frames_heard[1] == 2; }));
  CHECK(calls == 1);

  // The controller ends its runtime (closing every connection) before its
  // components and their claims.
  TagClaim survivor =
      dvm.runtimes[0]->own_control({daemon_tags::report}, [](Vpid, std::uint16_t, const Bytes&) {});
  dvm.runtimes[0].reset();
  survivor = TagClaim();  // nothing to give back to: no crash, no write to freed memory
}
