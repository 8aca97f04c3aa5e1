// Jobs in virtual time: a grove run goes through the controller's job table
// (the machine the real controller drives) to modelled rank hosts, while the
// roster and the daemons' ControllerWatch decide liveness as on real
// daemons. A job ends as it would there: cleanly, of a failing rank, of its
// timeout, or of a daemon the DVM lost (stalled, cut off or dead), with
// the message grove run prints (test/swarm/test_ssh_dvm.cc and
// test/multinode/test_run.cc see the same on real daemons).
#include <catch2/catch.hpp>

#include "sim/control_plane_sim.h"

using namespace grove;

namespace {

constexpr TimeNs kMs = 1'000'000;
constexpr TimeNs kS = 1'000 * kMs;

// 8 daemons of 2 slots: 16 ranks, 2 on each, rank 2v and 2v+1 on daemon v.
ControlPlaneSimOptions with_job(TimeNs run_ns, std::uint32_t np = 16) {
  ControlPlaneSimOptions options;
  options.daemons = 8;
  options.duration_ns = 60 * kS;
  SimJob job;
  job.submit_at_ns = 1 * kS;
  job.np = np;
  job.run_ns = run_ns;
  options.jobs.push_back(job);
  return options;
}

std::string listing(const ControlPlaneSimResult& result) {
  std::string text;
  for (const auto& decision : result.decisions)
    text += describe(decision) + "\n";
  for (const auto& end : result.jobs_ended) {
    text += "t=" + std::to_string(static_cast<double>(end.at_ns) / 1e9) + "s job " +
            std::to_string(end.job) + " ended, status " + std::to_string(end.status) + ": " +
            end.message + "\n";
  }
  return text.empty() ? "(nothing decided)" : text;
}

}  // namespace

TEST_CASE("a job runs on every daemon and ends cleanly once its ranks have",
          "[control_plane][jobs]") {
  auto result = run_control_plane_sim(with_job(5 * kS));
  INFO(listing(result));
  CHECK(result.decisions.empty());
  CHECK(result.ranks_started == 16);
  REQUIRE(result.jobs_ended.size() == 1);
  CHECK(result.jobs_ended[0].job == 1);
  CHECK(result.jobs_ended[0].status == 0);
  // Submitted at 1 s, the ranks ran 5 s after starting (a few ms of
  // messages and start-up on either side).
  CHECK(result.jobs_ended[0].at_ns > 6 * kS);
  CHECK(result.jobs_ended[0].at_ns < 6 * kS + 10 * kMs);
}

TEST_CASE("a failing rank ends its job with its status, at once", "[control_plane][jobs]") {
  auto options = with_job(5 * kS);
  options.jobs[0].failing_rank = 5;
  options.jobs[0].failing_status = 3;
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.jobs_ended.size() == 1);
  CHECK(result.jobs_ended[0].status == 3);
  CHECK(result.jobs_ended[0].message == "rank 5 exited with status 3");
}

TEST_CASE("a job past its --timeout is killed with status 124", "[control_plane][jobs]") {
  auto options = with_job(50 * kS);
  options.jobs[0].timeout_s = 2;
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.jobs_ended.size() == 1);
  CHECK(result.jobs_ended[0].status == 124);
  CHECK(result.jobs_ended[0].message == "the job ran out of time (--timeout) and was killed");
  CHECK(result.jobs_ended[0].at_ns > 3 * kS);
  CHECK(result.jobs_ended[0].at_ns < 3 * kS + 10 * kMs);
}

TEST_CASE("a daemon stopped past the heartbeat limit ends the job it hosted ranks of",
          "[control_plane][jobs]") {
  auto options = with_job(50 * kS);
  options.faults.stalls.push_back({3, 10 * kS, 20 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE_FALSE(result.decisions.empty());
  const ControlPlaneDecision& lost = result.decisions[0];
  CHECK(lost.vpid == 3);
  CHECK(lost.kind == ControlPlaneDecision::Kind::lost);
  REQUIRE(result.jobs_ended.size() == 1);
  CHECK(result.jobs_ended[0].status == 1);
  CHECK(result.jobs_ended[0].message ==
        "daemon 3 (node3), which hosted ranks of this job, was lost");
  // Its ranks died with it; the others were killed: the job ended just
  // after the verdict, not when the stalled daemon ran again.
  CHECK(result.jobs_ended[0].at_ns > lost.at_ns);
  CHECK(result.jobs_ended[0].at_ns < lost.at_ns + 10 * kMs);
}

TEST_CASE("a daemon that dies ends the job it hosted ranks of; a job elsewhere runs on",
          "[control_plane][jobs]") {
  auto options = with_job(20 * kS, 4);  // daemons 0 and 1
  SimJob elsewhere = options.jobs[0];
  elsewhere.np = 16;
  options.jobs.push_back(elsewhere);  // job 2: every daemon
  options.faults.crashes.push_back({1, 5 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE(result.jobs_ended.size() == 2);
  // Both held ranks on daemon 1: both end of it, at once.
  for (const SimJobEnd& end : result.jobs_ended) {
    CHECK(end.status == 1);
    CHECK(end.message == "daemon 1 (node1), which hosted ranks of this job, was lost");
    CHECK(end.at_ns < 5 * kS + 10 * kMs);
  }
}

TEST_CASE("a partition costs one daemon, and the job on it, not the job beside it",
          "[control_plane][jobs]") {
  // 4 ranks fill daemons 0 and 1; the link between daemons 5 and 6 breaks.
  auto options = with_job(30 * kS, 4);
  SimJob wide = options.jobs[0];
  wide.np = 16;
  options.jobs.push_back(wide);
  options.faults.partitions.push_back({5, 6, 10 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  REQUIRE_FALSE(result.decisions.empty());
  const Vpid lost = result.decisions[0].vpid;
  CHECK((lost == 5 || lost == 6));
  REQUIRE(result.jobs_ended.size() == 2);
  CHECK(result.jobs_ended[0].job == 2);
  CHECK(result.jobs_ended[0].message == "daemon " + std::to_string(lost) + " (node" +
                                            std::to_string(lost) +
                                            "), which hosted ranks of this job, was lost");
  CHECK(result.jobs_ended[1].job == 1);
  CHECK(result.jobs_ended[1].status == 0);
}

TEST_CASE("a stalled controller kills no job: its stall is nobody's fault",
          "[control_plane][jobs]") {
  auto options = with_job(20 * kS);
  options.faults.stalls.push_back({kControllerVpid, 10 * kS, 18 * kS});
  auto result = run_control_plane_sim(options);
  INFO(listing(result));
  CHECK(result.decisions.empty());
  REQUIRE(result.jobs_ended.size() == 1);
  CHECK(result.jobs_ended[0].status == 0);
}
