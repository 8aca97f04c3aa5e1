// A daemon runtime that comes back at its vpid or joins a running DVM, over
// real TCP on loopback: its engine waits for the controller's seed (frames
// that arrive first wait with it), the seed survives the wire, and then a
// broadcast and a fence placed after the join reach every daemon, old and new.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>

#include "daemon/daemon_runtime.h"
#include "grpcomm/join_seed.h"
#include "os/event_loop.h"
#include "os/timer.h"
#include "rml/transport/dvm_secret.h"
#include "util/param_registry.h"
#include "util/standard_params.h"

using namespace grove;

namespace {

struct LoopbackDvm {
  explicit LoopbackDvm(std::uint32_t size) {
    register_standard_params(params);
    REQUIRE(enable_event_threads());
    loop.emplace();
    log = std::make_unique<Log>("test", params, sink.get());
    secret = generate_dvm_secret();
    for (Vpid vpid = 0; vpid < size; ++vpid)
      start(vpid, RuntimeOptions{vpid, size, secret, "127.0.0.1"});
  }
  ~LoopbackDvm() {
    claims.clear();
    for (auto& runtime : runtimes)
      runtime.reset();
    loop.reset();
  }

  // Starts the runtime at vpid (again), and every daemon learns its address.
  void start(Vpid vpid, RuntimeOptions options) {
    auto runtime = DaemonRuntime::create(loop->base(), params, *log, options, RuntimeHooks{});
    REQUIRE(runtime);
    if (vpid >= runtimes.size()) runtimes.resize(vpid + 1);
    runtimes[vpid] = std::move(*runtime);
    auto endpoint = runtimes[vpid]->listen();
    REQUIRE(endpoint);
    if (vpid >= endpoints.size()) endpoints.resize(vpid + 1);
    endpoints[vpid] = *endpoint;
    for (Vpid other = 0; other < runtimes.size(); ++other) {
      if (!runtimes[other] || other == vpid) continue;
      REQUIRE(runtimes[other]->add_peer(vpid, endpoints[vpid]));
      REQUIRE(runtimes[vpid]->add_peer(other, endpoints[other]));
    }
  }
  // A newcomer at vpid: declared by the controller, seeded from the wire.
  void bring_in(Vpid vpid) {
    start(vpid, RuntimeOptions{vpid, 0, secret, "127.0.0.1", /*joining=*/true});
    CHECK(runtimes[vpid]->awaiting_seed());
    REQUIRE(runtimes[0]->declare_return(vpid));
    const std::uint64_t epoch = runtimes[0]->engine().membership().epoch();
    // Let the notice reach the others (and wait at the newcomer) first.
    REQUIRE(pump([&] {
      for (Vpid other = 1; other < runtimes.size(); ++other) {
        if (other != vpid && runtimes[other] &&
            runtimes[other]->engine().membership().epoch() < epoch)
          return false;
      }
      return true;
    }));
    auto seed = decode_join_seed(encode_join_seed(runtimes[0]->join_seed()));
    REQUIRE(seed);
    REQUIRE(runtimes[vpid]->join(*seed));
    CHECK_FALSE(runtimes[vpid]->awaiting_seed());
    CHECK_FALSE(runtimes[vpid]->join(*seed));  // once
  }
  // Every living daemon contributes to `signature` placed at the controller's
  // epoch now, and the fence must end ok everywhere.
  bool fence_everywhere(const std::string& signature) {
    std::vector<Vpid> living;
    for (Vpid vpid = 0; vpid < runtimes.size(); ++vpid) {
      if (runtimes[vpid]) living.push_back(vpid);
    }
    const VpidSet hosts = VpidSet::from_list(living);
    const std::uint64_t placed = runtimes[0]->engine().membership().epoch();
    auto ended = std::make_shared<std::size_t>(0);
    for (Vpid vpid : living) {
      claims.push_back(runtimes[vpid]->own_fences(signature, [ended](const FenceDone& done) {
        CHECK(done.status == FenceStatus::ok);
        ++*ended;
      }));
      runtimes[vpid]->contribute(FenceRequest{signature, hosts, {}, placed});
    }
    return pump([&] { return *ended == living.size(); });
  }
  // Runs the loop until `done` holds (true) or 20 s pass (false).
  bool pump(const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
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
  std::vector<std::byte> secret;
  std::vector<std::unique_ptr<DaemonRuntime>> runtimes;
  std::vector<Endpoint> endpoints;
  std::vector<TagClaim> claims;
};

}  // namespace

TEST_CASE("a runtime joins a running DVM from the controller's seed", "[runtime][returns]") {
  LoopbackDvm dvm(4);
  REQUIRE(dvm.fence_everywhere("before"));
  dvm.bring_in(4);
  const Engine& joiner = dvm.runtimes[4]->engine();
  CHECK(joiner.membership().vpid_end() == 5);
  CHECK(joiner.membership().epoch() == 1);
  CHECK(joiner.fence_generation("before") == 1);  // the joined-late rule, over the wire
  REQUIRE(dvm.fence_everywhere("after"));
  for (Vpid vpid = 0; vpid < 5; ++vpid) {
    INFO("vpid " << vpid);
    CHECK(dvm.runtimes[vpid]->engine().membership().is_alive(4));
    CHECK(dvm.runtimes[vpid]->engine().fence_generation("after") == 1);
  }
}

TEST_CASE("a runtime comes back at its old vpid after its departure", "[runtime][returns]") {
  LoopbackDvm dvm(4);
  dvm.runtimes[2].reset();
  dvm.runtimes[0]->declare_departure(2);
  REQUIRE(dvm.pump([&] { return dvm.runtimes[1]->engine().membership().is_failed(2); }));
  dvm.bring_in(2);
  for (Vpid vpid : {0u, 1u, 3u}) {
    INFO("vpid " << vpid);
    CHECK(dvm.runtimes[vpid]->engine().membership().incarnation(2) == 2);
  }
  CHECK(dvm.runtimes[2]->engine().membership().is_alive(2));
  REQUIRE(dvm.fence_everywhere("back"));
}

TEST_CASE("a join seed that is malformed or does not list the joiner is refused",
          "[runtime][returns]") {
  LoopbackDvm dvm(2);
  dvm.start(5, RuntimeOptions{5, 0, dvm.secret, "127.0.0.1", /*joining=*/true});
  // Not a seed at all; a daemon set far past any DVM (refused before it is
  // allocated); an incarnation newer than the seed's epoch.
  CHECK_FALSE(decode_join_seed(Bytes{std::byte{1}, std::byte{2}}));
  JoinSeedMessage huge;
  huge.daemons = VpidSet::span(0, 0xFFFFFFFEu);
  huge.epoch = 1;
  huge.vpid_end = 0xFFFFFFFFu;
  CHECK_FALSE(decode_join_seed(encode(huge)));
  JoinSeedMessage future;
  future.daemons = VpidSet::span(0, 5);
  future.epoch = 2;
  future.vpid_end = 6;
  future.incarnations = {{5, 3}};
  CHECK_FALSE(decode_join_seed(encode(future)));
  // A well-formed seed of a DVM this daemon is not in.
  auto seed = decode_join_seed(encode_join_seed(dvm.runtimes[0]->join_seed()));
  CHECK_FALSE(seed);                                     // epoch 0: no return or join was declared
  REQUIRE(dvm.runtimes[0]->declare_return(1) == false);  // alive: no return
  dvm.runtimes[1].reset();
  dvm.runtimes[0]->declare_departure(1);
  REQUIRE(dvm.runtimes[0]->declare_return(1));
  auto other = decode_join_seed(encode_join_seed(dvm.runtimes[0]->join_seed()));
  REQUIRE(other);
  auto refused = dvm.runtimes[5]->join(*other);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("does not list vpid 5"));
  CHECK(dvm.runtimes[5]->awaiting_seed());
}
