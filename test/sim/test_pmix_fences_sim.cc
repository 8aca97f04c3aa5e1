// PMIx fences through the bridge's state machine (control_plane/pmix_fences.h)
// over simulated daemons: each daemon's ranks enter every round through its
// fence book, and each answer is checked against what the daemons gave.
#include <catch2/catch.hpp>

#include <sstream>

#include "grpcomm/messages.h"
#include "sim/pmix_fence_layer.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"

using namespace grove;

namespace {

SimResult run_checked(const SimOptions& options) {
  SimResult result = run_simulation(options);
  if (!result.ok) {
    std::ostringstream trace;
    for (const auto& line : result.trace)
      trace << "  " << line << "\n";
    FAIL(result.violation << "\nreplay: " << replay_command(options) << "\n" << trace.str());
  }
  return result;
}

}  // namespace

TEST_CASE("every rank's PMIx fence is answered with the other daemons' data", "[pmix_sim]") {
  for (std::uint32_t daemons : {1u, 10u, 64u}) {
    SimOptions options;
    options.daemons = daemons;
    options.rounds = 4;
    options.payload_bytes = 6000;
    options.pmix_fences = true;
    options.seed = 77 + daemons;
    SimResult result = run_checked(options);
    CHECK(result.rounds_completed == 4);
    CHECK(result.pmix_released == std::uint64_t{daemons} * 4);
    CHECK(result.pmix_failed == 0);
  }
}

TEST_CASE("a fence over some daemons answers only theirs", "[pmix_sim]") {
  SimOptions options;
  options.daemons = 40;
  options.rounds = 3;
  options.participant_fraction = 0.5;
  options.pmix_fences = true;
  options.seed = 4242;
  SimResult result = run_checked(options);
  CHECK(result.pmix_released % 3 == 0);
  CHECK(result.pmix_released < 40 * 3);
  CHECK(result.pmix_released >= 3);
}

TEST_CASE("under lost daemons no rank waits in a PMIx fence for ever", "[pmix_sim]") {
  std::uint64_t failed = 0, released = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    SimOptions options;
    options.daemons = 24;
    options.radices = {seed % 2 == 0 ? 4u : 64u, 4};
    options.rounds = 3;
    options.random_faults = 1 + seed % 3;
    options.release_delay_ns = seed % 2 == 0 ? 150'000 : 0;
    options.pmix_fences = true;
    options.validate_trees = true;
    options.seed = 9000 + seed;
    SimResult result = run_checked(options);
    failed += result.pmix_failed;
    released += result.pmix_released;
  }
  // Both ends were exercised: rounds released to ranks and rounds failed
  // with the engine's cause.
  CHECK(failed > 0);
  CHECK(released > 0);
}

TEST_CASE("the simulated PMIx layer catches an answer that is not the other daemons' data",
          "[pmix_sim]") {
  SimPmixFences layer(3, "job", 1 << 20);
  std::vector<std::pair<Vpid, Bytes>> contributions;
  for (Vpid daemon = 0; daemon < 3; ++daemon) {
    Bytes data(4, static_cast<std::byte>(daemon + 1));
    contributions.emplace_back(daemon, data);
    auto request = layer.enter(daemon, 1, FenceRequest{"", VpidSet::span(0, 2), data});
    REQUIRE(request.has_value());
    CHECK(request->signature == "pmix:job:*");
  }
  // Daemon 2's data is lost on the way: daemon 0's ranks would get 4 bytes,
  // not the 8 daemons 1 and 2 gave.
  FenceRelease release;
  release.key = {"pmix:job:*", 1};
  release.contributions = {contributions[0], contributions[1]};
  FenceDone done;
  done.key = release.key;
  done.release = std::make_shared<const Bytes>(encode(release));
  auto status = layer.fence_done(0, done);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("not the other daemons' 8") != std::string::npos);
  // The whole release passes; a second answer is caught; so is a call left open.
  release.contributions = contributions;
  done.release = std::make_shared<const Bytes>(encode(release));
  CHECK(layer.fence_done(1, done));
  CHECK(layer.fence_done(1, done));               // the book answers nothing twice
  CHECK_FALSE(layer.finish({true, true, true}));  // daemon 2's ranks still wait
  CHECK(layer.finish({true, true, false}));
}

TEST_CASE("a replay line keeps the PMIx fence layer, and old lines run without it", "[pmix_sim]") {
  SimOptions options;
  options.pmix_fences = true;
  auto line = replay_arguments(options);
  CHECK_THAT(line, Catch::Contains("--pmix-fences true"));
  auto parsed = parse_replay_arguments(line);
  REQUIRE(parsed);
  CHECK(parsed->pmix_fences);
  options.pmix_fences = false;
  CHECK_THAT(replay_arguments(options), !Catch::Contains("pmix"));
  CHECK_FALSE(parse_replay_arguments(line + " --pmix-fences sometimes"));
}
