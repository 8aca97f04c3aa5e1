// What a fence costs each daemon in hand-overs and wake-ups, counted by the
// daemons themselves (`grove status`: loop_passes, pmix_upcalls,
// pmix_upcall_wakes, pmix_answers) and by their engines (frames by type).
// Two jobs of one rank per daemon run 100 and 300 barriers; the difference
// between them is what 200 barriers cost, without what a job costs to start
// and end. Each count is pinned so that a change adding one per fence fails.
#include <catch2/catch.hpp>

#include <map>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

struct Counts {
  std::map<int, nlohmann::json> by_vpid;
  nlohmann::json engine_total;
};

Counts counts(Dvm& dvm) {
  Counts out;
  auto status = dvm.status();
  for (const auto& entry : status["counters"])
    out.by_vpid[entry["vpid"].get<int>()] = entry;
  out.engine_total = status["engine_total"];
  return out;
}

std::uint64_t field(const Counts& counts, int vpid, const char* name) {
  return counts.by_vpid.at(vpid)[name].get<std::uint64_t>();
}

Counts barriers(Dvm& dvm, int daemons, int rounds) {
  auto run = dvm.grove({"run", "-n", std::to_string(daemons), "--map-by", "node",
                        binary_from_env("GROVE_PMIX_FENCE_CLIENT"), "--rounds",
                        std::to_string(rounds), "--barrier"});
  REQUIRE(run.exit_code == 0);
  return counts(dvm);
}

}  // namespace

TEST_CASE(
    "a barrier costs each daemon two hand-overs with libpmix and two loop passes; "
    "2(N-1) frames and shared acks",
    "[pmix][wakeups]") {
  constexpr int kDaemons = 4;
  // Acks that wait for a whole job: no ack flush in the counted passes.
  Dvm dvm(kDaemons, {"--mca", "grpcomm_release_ack_delay_us", "1000000"});
  REQUIRE(dvm.ready());
  const Counts start = barriers(dvm, kDaemons, 5);  // first-job costs out of the way
  const Counts short_job = barriers(dvm, kDaemons, 100);
  const Counts long_job = barriers(dvm, kDaemons, 300);
  const double fences = 200;
  for (int vpid = 0; vpid < kDaemons; ++vpid) {
    INFO("vpid " << vpid);
    auto per_fence = [&](const char* name) {
      const std::uint64_t first = field(short_job, vpid, name) - field(start, vpid, name);
      const std::uint64_t second = field(long_job, vpid, name) - field(short_job, vpid, name);
      return (static_cast<double>(second) - static_cast<double>(first)) / fences;
    };
    // One fence upcall from libpmix's thread and one answer back: exactly.
    CHECK(per_fence("pmix_upcalls") == 1.0);
    CHECK(per_fence("pmix_answers") == 1.0);
    // The upcall wakes the loop once at most (a busy loop takes it in a pass
    // it was in anyway).
    CHECK(per_fence("pmix_upcall_wakes") <= 1.0);
    // A daemon's loop wakes for its rank's fence and for the release: two
    // passes (three before a frame from the loop's own transport stopped
    // waking it again through an eventfd). The controller also takes every
    // rollup, which may come in passes of their own.
    if (vpid != 0) {
      CHECK(per_fence("loop_passes") <= 2.2);
    } else {
      CHECK(per_fence("loop_passes") <= 1.4 + (kDaemons - 1));
    }
  }
  // Frames, exactly: N-1 rollups and N-1 releases a fence; the acks of these
  // releases wait (1 s) and go out a few frames per daemon (at most 256
  // acks a frame, and a frame a second): far fewer than one per fence.
  auto frames = [&](const Counts& from, const Counts& to, const char* type) {
    return sum_traffic(to.engine_total, type, "fence-release").first +
           sum_traffic(to.engine_total, type, "fence-rollup").first -
           sum_traffic(from.engine_total, type, "fence-release").first -
           sum_traffic(from.engine_total, type, "fence-rollup").first;
  };
  CHECK(frames(short_job, long_job, "fence-rollup") == 300 * (kDaemons - 1));
  CHECK(frames(short_job, long_job, "xcast-data") == 300 * (kDaemons - 1));
  CHECK(frames(short_job, long_job, "xcast-ack") <= 300 * (kDaemons - 1) / 10);
}
