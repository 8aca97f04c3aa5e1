// One PmixServer in this process, as the daemon of a one-daemon DVM, serving
// real pmix_fence_client processes.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "one_daemon.h"

namespace grove::pmix_test {
namespace {

constexpr std::chrono::milliseconds kClientDeadline{60000};

std::string describe(const ClientRun& run) {
  return "rank " + std::to_string(run.rank) + ": exit " + std::to_string(run.process.exit_code) +
         " signal " + std::to_string(run.process.signal) + "\nstdout:\n" + run.out + "\nstderr:\n" +
         run.err;
}

// Every client exited 0 and printed a summary; all digests agree.
std::vector<ClientSummary> require_clean_runs(const std::vector<ClientRun>& runs,
                                              std::uint32_t ranks, int rounds) {
  std::vector<ClientSummary> summaries;
  for (const ClientRun& run : runs) {
    INFO(describe(run));
    REQUIRE(run.process.exited);
    REQUIRE(run.process.signal == 0);
    REQUIRE(run.process.exit_code == 0);
    std::optional<ClientSummary> summary = parse_summary(run.out);
    REQUIRE(summary.has_value());
    CHECK(summary->rank == run.rank);
    CHECK(summary->size == ranks);
    CHECK(summary->rounds == rounds);
    summaries.push_back(*summary);
  }
  REQUIRE(summaries.size() == ranks);
  for (const ClientSummary& summary : summaries) {
    CHECK(summary.digest == summaries.front().digest);
    CHECK(summary.modex_bytes == summaries.front().modex_bytes);
  }
  return summaries;
}

void require_local_placement(const std::vector<ClientSummary>& summaries, std::uint32_t ranks) {
  std::set<std::uint32_t> local_ranks;
  for (const ClientSummary& summary : summaries) {
    CHECK(summary.local_size == ranks);
    CHECK(summary.node == "node0");
    local_ranks.insert(summary.local_rank);
  }
  CHECK(local_ranks.size() == ranks);
}

void require_all_finalized(const OneDaemon& daemon, const std::string& nspace,
                           std::uint32_t ranks) {
  std::vector<std::uint32_t> seen;
  for (const auto& [finalized_nspace, rank] : daemon.finalized)
    if (finalized_nspace == nspace) seen.push_back(rank);
  std::sort(seen.begin(), seen.end());
  std::vector<std::uint32_t> expected;
  for (std::uint32_t rank = 0; rank < ranks; ++rank)
    expected.push_back(rank);
  CHECK(seen == expected);
}

// libpmix 4.2 may complete a fence whose participants are all local without
// an upcall; when it does call fence_nb, it must be once per round.
void require_fences_consistent(const OneDaemon& daemon, int rounds, bool collect) {
  INFO("fence_nb upcalls: " << daemon.fences.size());
  CHECK((daemon.fences.empty() || daemon.fences.size() == static_cast<std::size_t>(rounds)));
  for (const FenceSeen& fence : daemon.fences) {
    CHECK(fence.ranks.empty());  // the clients fence with the wildcard rank
    CHECK(fence.collect_data == collect);
  }
  CHECK(daemon.direct_modex_requests == 0);
}

// The shared daemon, running, with nothing recorded yet.
OneDaemon& fresh_daemon() {
  OneDaemon& daemon = shared_daemon();
  const Status& started = shared_daemon_status();
  INFO((started ? std::string() : started.error().message));
  REQUIRE(started);
  daemon.clear_records();
  return daemon;
}

}  // namespace

TEST_CASE("one daemon: four clients pass three collecting fences with one digest", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.collect", 4);
  Status registered = daemon.register_job(job);
  INFO((registered ? std::string() : registered.error().message));
  REQUIRE(registered);

  Result<std::vector<ClientRun>> runs = daemon.run_clients(job, {"--rounds", "3"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  std::vector<ClientSummary> summaries = require_clean_runs(*runs, 4, 3);
  CHECK(summaries.front().modex_bytes > 0);
  require_local_placement(summaries, 4);
  require_all_finalized(daemon, job.nspace, 4);
  require_fences_consistent(daemon, 3, true);
  WARN("single server, collect: fence_nb upcalls " << daemon.fences.size() << " for 3 fences");
  CHECK(daemon.server().pending_fence_count() == 0);
  CHECK(daemon.deregister_job(job.nspace));
}

TEST_CASE("one daemon: four clients pass three barriers", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.barrier", 4);
  REQUIRE(daemon.register_job(job));

  Result<std::vector<ClientRun>> runs =
      daemon.run_clients(job, {"--rounds", "3", "--barrier"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  std::vector<ClientSummary> summaries = require_clean_runs(*runs, 4, 3);
  CHECK(summaries.front().modex_bytes == 0);
  require_all_finalized(daemon, job.nspace, 4);
  require_fences_consistent(daemon, 3, false);
  CHECK(daemon.server().pending_fence_count() == 0);
}

TEST_CASE("one daemon: without collection every value is still served locally", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.nocollect", 4);
  REQUIRE(daemon.register_job(job));

  Result<std::vector<ClientRun>> runs =
      daemon.run_clients(job, {"--rounds", "3", "--no-collect"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  std::vector<ClientSummary> summaries = require_clean_runs(*runs, 4, 3);
  CHECK(summaries.front().modex_bytes > 0);
  require_all_finalized(daemon, job.nspace, 4);
  require_fences_consistent(daemon, 3, false);
}

TEST_CASE("one daemon: fetch_local_modex waits for the rank's commit", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.fetch", 2);
  REQUIRE(daemon.register_job(job));
  int fetched_status = 1;
  std::size_t fetched_bytes = 0;
  bool fetched = false;
  // Asked before any client runs: PMIx holds the request until rank 1 commits.
  daemon.server().fetch_local_modex(job.nspace, 1, [&](int status, std::vector<std::byte> blob) {
    fetched = true;
    fetched_status = status;
    fetched_bytes = blob.size();
  });
  Result<std::vector<ClientRun>> runs =
      daemon.run_clients(job, {"--rounds", "2", "--max-bytes", "4096"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  require_clean_runs(*runs, 2, 2);
  REQUIRE(fetched);
  INFO("status " << pmix_status_text(fetched_status));
  CHECK(fetched_status == kPmixSuccess);
  CHECK(fetched_bytes > 0);
}

TEST_CASE("one daemon: an abort reaches on_abort with its status and message", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.abort", 2);
  REQUIRE(daemon.register_job(job));

  Result<std::vector<ClientRun>> runs = daemon.run_clients(job, {"--abort", "7"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  for (const ClientRun& run : *runs) {
    INFO(describe(run));
    // Nobody kills the client here (a daemon would): PMIx_Abort returns once
    // the server has acknowledged it, and the client exits with status 3.
    CHECK(run.process.exited);
    CHECK(run.process.signal == 0);
  }
  REQUIRE(daemon.aborts.size() == 2);
  std::set<std::uint32_t> ranks;
  for (const PmixAbortNotice& abort : daemon.aborts) {
    CHECK(abort.nspace == job.nspace);
    CHECK(abort.status == 7);
    CHECK(abort.message.find("aborts with status 7") != std::string::npos);
    ranks.insert(abort.rank);
  }
  CHECK(ranks == std::set<std::uint32_t>{0, 1});
}

TEST_CASE("one daemon: unsupported requests fail at once", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();
  PmixJob job = OneDaemon::local_job("grove.test.unsupported", 1);
  REQUIRE(daemon.register_job(job));

  Result<std::vector<ClientRun>> runs =
      daemon.run_clients(job, {"--rounds", "1", "--probe-unsupported"}, kClientDeadline);
  INFO((runs ? std::string() : runs.error().message));
  REQUIRE(runs);
  require_clean_runs(*runs, 1, 1);
  for (const char* call : {"PMIx_Publish", "PMIx_Lookup", "PMIx_Spawn", "PMIx_Allocation_request",
                           "PMIx_Job_control"}) {
    CHECK(runs->front().out.find(std::string(call) + " -> NOT-SUPPORTED") != std::string::npos);
    // ... and the daemon was told, to say so in its log.
    daemon.server().handle_pending_upcalls();
    CHECK(std::count(daemon.unsupported.begin(), daemon.unsupported.end(), call) == 1);
  }
}

TEST_CASE("one daemon: malformed jobs are errors", "[pmix]") {
  OneDaemon& daemon = fresh_daemon();

  PmixJob duplicate_names = OneDaemon::local_job("grove.test.bad1", 2);
  duplicate_names.node_hostnames = {"same", "same"};
  Status status = daemon.register_job(duplicate_names);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("appears twice") != std::string::npos);

  PmixJob out_of_order = OneDaemon::local_job("grove.test.bad2", 3);
  std::swap(out_of_order.procs[0], out_of_order.procs[1]);
  status = daemon.register_job(out_of_order);
  REQUIRE_FALSE(status);
  CHECK(status.error().message.find("rank order") != std::string::npos);

  PmixJob wrong_size = OneDaemon::local_job("grove.test.bad3", 3);
  wrong_size.size = 4;
  CHECK_FALSE(daemon.register_job(wrong_size));

  PmixJob bad_node = OneDaemon::local_job("grove.test.bad4", 2);
  bad_node.procs[1].node_id = 5;
  CHECK_FALSE(daemon.register_job(bad_node));
}

TEST_CASE("one daemon: a second server in the same process is refused", "[pmix]") {
  OneDaemon& first = fresh_daemon();
  event_base* base = first.base();
  TempDir dir("grove-pmix-second");
  PmixServerOptions options;
  options.tmpdir = dir.path();
  options.daemon_vpid = 1;
  Result<std::unique_ptr<PmixServer>> second = PmixServer::create(base, options, nullptr);
  REQUIRE_FALSE(second);
  CHECK(second.error().message.find("one per process") != std::string::npos);
}

}  // namespace grove::pmix_test
