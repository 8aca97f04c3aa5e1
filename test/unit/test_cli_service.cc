// The controller's CLI service (status gathering, benchmarks) against
// scripted inputs.
#include <catch2/catch.hpp>

#include "daemon/control_plane/cli_service.h"
#include "grpcomm/tags.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::effects_of;

namespace {

CountersReply counters_of(Vpid vpid, std::uint64_t request) {
  CountersReply reply;
  reply.vpid = vpid;
  reply.request = request;
  return reply;
}

// A copy: the outbox is often a temporary.
template <typename T>
T only(const cli::Outbox& out) {
  REQUIRE(out.size() == 1);
  auto found = effects_of<T>(out);
  REQUIRE(found.size() == 1);
  return found[0];
}

}  // namespace

TEST_CASE("status gathers every living daemon once, for every requester", "[cli_service]") {
  CliService service;
  auto out = service.status_requested(7, counters_of(0, 0), 3);
  REQUIRE(out.size() == 2);
  const std::uint64_t id = std::get<cli::BroadcastCountersRequest>(out[0]).id;
  CHECK(std::get<cli::ArmTimer>(out[1]).timer == CliTimer::status_deadline);
  CHECK(std::get<cli::ArmTimer>(out[1]).delay_ms == 3000);
  // A second grove status joins the gathering under way.
  CHECK(service.status_requested(8, counters_of(0, 0), 3).empty());
  CHECK(service.counters_arrived(counters_of(1, id), 3).empty());
  CHECK(service.counters_arrived(counters_of(2, id + 99), 3).empty());  // another gathering's
  const auto reply = only<cli::ReplyStatus>(service.counters_arrived(counters_of(2, id), 3));
  CHECK(reply.requesters == std::vector<std::uint64_t>{7, 8});
  CHECK(reply.counters.size() == 3);
  CHECK_FALSE(service.gathering());
  // Its deadline, firing later, answers nothing; a late answer neither.
  CHECK(service.timer_fired(CliTimer::status_deadline).empty());
  CHECK(service.counters_arrived(counters_of(1, id), 3).empty());
}

TEST_CASE("status answers at its deadline, or when a lost daemon was the last awaited",
          "[cli_service]") {
  CliService service;
  auto out = service.status_requested(1, counters_of(0, 0), 3);
  const std::uint64_t id = std::get<cli::BroadcastCountersRequest>(out[0]).id;
  service.counters_arrived(counters_of(1, id), 3);
  CHECK(only<cli::ReplyStatus>(service.timer_fired(CliTimer::status_deadline)).counters.size() ==
        2);

  out = service.status_requested(2, counters_of(0, 0), 3);
  const std::uint64_t next = std::get<cli::BroadcastCountersRequest>(out[0]).id;
  CHECK(next != id);
  service.counters_arrived(counters_of(1, next), 3);
  CHECK(service.daemon_lost(3).empty());
  CHECK(only<cli::ReplyStatus>(service.daemon_lost(2)).requesters == std::vector<std::uint64_t>{2});
}

TEST_CASE("a status with a dump asks for the recordings, and never joins another gathering",
          "[cli_service]") {
  CliService service;
  auto out = service.status_requested(1, counters_of(0, 0), 2, "/tmp/dump");
  REQUIRE(out.size() == 2);
  const auto request = std::get<cli::BroadcastCountersRequest>(out[0]);
  CHECK(request.flight);
  // A plain status rides on it (the dump's requester comes first); another
  // dump does not: it would miss its own directory.
  CHECK(service.status_requested(2, counters_of(0, 0), 2).empty());
  CHECK_THAT(
      only<cli::ReplyError>(service.status_requested(3, counters_of(0, 0), 2, "/tmp/b")).error,
      Catch::Contains("another grove status"));
  const auto reply =
      only<cli::ReplyStatus>(service.counters_arrived(counters_of(1, request.id), 2));
  CHECK(reply.dump_dir == "/tmp/dump");
  CHECK(reply.requesters == std::vector<std::uint64_t>{1, 2});
  // Nor does a dump ride on a plain gathering, which asked for no recordings.
  out = service.status_requested(6, counters_of(0, 0), 2);
  CHECK_THAT(
      only<cli::ReplyError>(service.status_requested(7, counters_of(0, 0), 2, "/tmp/d")).error,
      Catch::Contains("another grove status"));
  only<cli::ReplyStatus>(service.counters_arrived(
      counters_of(1, std::get<cli::BroadcastCountersRequest>(out[0]).id), 2));
  // A plain status asks for none.
  out = service.status_requested(4, counters_of(0, 0), 2);
  CHECK_FALSE(std::get<cli::BroadcastCountersRequest>(out[0]).flight);
  CHECK(service.status_requested(5, counters_of(0, 0), 2, "/tmp/c").size() == 1);
}

TEST_CASE("a controller alone answers status at once", "[cli_service]") {
  CliService service;
  auto out = service.status_requested(4, counters_of(0, 0), 1);
  REQUIRE(out.size() == 2);
  CHECK(std::holds_alternative<cli::BroadcastCountersRequest>(out[0]));
  CHECK(std::get<cli::ReplyStatus>(out[1]).requesters == std::vector<std::uint64_t>{4});
}

TEST_CASE("a release benchmark runs its rounds one after another and summarizes them",
          "[cli_service]") {
  CliService service;
  auto out = service.bench_requested(5, {"release", 1000, 3}, 4096, 0);
  CHECK(only<cli::StartReleaseRound>(out).round == 1);
  CHECK(only<cli::StartReleaseRound>(out).size == 1000);
  service.release_started(41);
  // Another broadcast's census is not this round's.
  CHECK(service.broadcast_done(tags::bench_release, 40, 0, 9000, 1, 100).empty());
  CHECK(service.broadcast_done(tags::fence_release, 41, 0, 9000, 1, 100).empty());
  out = service.broadcast_done(tags::bench_release, 41, 1000, 4000, 1200, 5000);
  CHECK(only<cli::StartReleaseRound>(out).round == 2);
  service.release_started(42);
  out = service.broadcast_done(tags::bench_release, 42, 5000, 6000, 1200, 7000);
  service.release_started(43);
  out = service.broadcast_done(tags::bench_release, 43, 7000, 9000, 1200, 9500);
  // The answer waits for the loop's next pass.
  CHECK(only<cli::ArmTimer>(out).timer == CliTimer::bench_finish);
  CHECK(only<cli::ArmTimer>(out).delay_ms == 0);
  const auto reply = only<cli::ReplyBench>(service.timer_fired(CliTimer::bench_finish));
  CHECK(reply.requester == 5);
  CHECK(reply.summary.spans_us == std::vector<double>{3.0, 1.0, 2.0});
  CHECK(reply.summary.min_us == 1.0);
  CHECK(reply.summary.median_us == 2.0);
  CHECK(reply.summary.p99_us == 3.0);
  CHECK(reply.summary.mean_us == 2.0);
  CHECK(reply.summary.wire_bytes == 1200);
  CHECK_FALSE(service.benchmarking());
}

TEST_CASE("a barrier benchmark times each round at the controller's release", "[cli_service]") {
  CliService service;
  CHECK(std::holds_alternative<cli::StartBarrierRound>(
      service.bench_requested(1, {"barrier", 0, 2}, 4096, 1000)[0]));
  service.fence_done("pmix:job:*", 1500);  // not the benchmark's fence
  // A job's release, complete late (its acks waited), is not the round's.
  CHECK(
      service.broadcast_done(tags::fence_release, 8, 0, 0, 77, 3000, /*acks_waited=*/true).empty());
  service.fence_done("bench-barrier", 4000);
  // The next round starts once every daemon has the release.
  CHECK(std::holds_alternative<cli::StartBarrierRound>(
      service.broadcast_done(tags::fence_release, 9, 0, 0, 77, 6000)[0]));
  service.fence_done("bench-barrier", 8000);
  service.broadcast_done(tags::fence_release, 10, 0, 0, 77, 8100);
  const auto reply = only<cli::ReplyBench>(service.timer_fired(CliTimer::bench_finish));
  CHECK(reply.summary.spans_us == std::vector<double>{3.0, 2.0});
}

TEST_CASE("with Bruck fences a barrier round ends, and the next starts, at the controller's end",
          "[cli_service]") {
  CliService service;
  const auto first = std::get<cli::StartBarrierRound>(
      service.bench_requested(1, {"barrier", 8000, 2}, 1 << 20, 1000)[0]);
  CHECK(first.size == 8000);  // the aggregate, split among the daemons by the controller
  CHECK(first.round == 1);
  CHECK(service.fence_done("pmix:job:*", 1500, true).empty());  // not the benchmark's fence
  const auto second =
      std::get<cli::StartBarrierRound>(service.fence_done("bench-barrier", 4000, true)[0]);
  CHECK(second.round == 2);
  CHECK(only<cli::ArmTimer>(service.fence_done("bench-barrier", 6000, true)).timer ==
        CliTimer::bench_finish);
  const auto reply = only<cli::ReplyBench>(service.timer_fired(CliTimer::bench_finish));
  CHECK(reply.summary.spans_us == std::vector<double>{3.0, 2.0});
}

TEST_CASE("a benchmark is refused while one runs, too large, or when the DVM stops",
          "[cli_service]") {
  CliService service;
  CHECK(only<cli::ReplyError>(service.bench_requested(1, {"release", 5000, 2}, 4096, 0)).error ==
        "--size exceeds rml_base_max_frame_size");
  service.bench_requested(2, {"release", 10, 2}, 4096, 0);
  CHECK(only<cli::ReplyError>(service.bench_requested(3, {"barrier", 0, 2}, 4096, 0)).error ==
        "a benchmark is already running");
  const auto stopped = only<cli::ReplyError>(service.stopping());
  CHECK(stopped.requester == 2);
  CHECK(stopped.error == "the DVM is stopping");
  CHECK(service.stopping().empty());
}

TEST_CASE("nearest-rank percentiles of a benchmark's spans", "[cli_service]") {
  std::vector<double> spans;
  for (int i = 100; i >= 1; --i)
    spans.push_back(i);
  BenchSummary summary = summarize_bench("release", 1, 100, 0, spans);
  CHECK(summary.p50_us == 50);
  CHECK(summary.p99_us == 99);
  CHECK(summary.max_us == 100);
  CHECK(summary.median_us == 51);          // the upper middle of an even count
  CHECK(summary.spans_us.front() == 100);  // in the order measured
}
