// Two PMIx servers, as two daemons of one DVM on this host. libpmix 4.2 allows
// one server per process, so each runs in its own grove_pmix_test_node
// process; a socketpair carries their fence blobs and direct-modex traffic.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "client_launch.h"
#include "one_daemon.h"
#include "support/wait.h"

namespace grove::pmix_test {
namespace {

constexpr std::chrono::milliseconds kNodeDeadline{60000};
constexpr std::chrono::milliseconds kTestDeadline{90000};

struct NodeRun {
  ChildProcess process;
  std::string out;
  std::string err;
};

struct NodeCounts {
  std::size_t fence_nb = 0;
  std::size_t dmodex_asked = 0;
  std::size_t dmodex_served = 0;
};

std::optional<NodeCounts> parse_node_line(const std::string& text) {
  std::vector<std::string> lines = lines_starting_with(text, "node ");
  if (lines.size() != 1) return std::nullopt;
  NodeCounts counts;
  unsigned vpid = 0;
  if (std::sscanf(lines.front().c_str(), "node %u: fence_nb %zu, dmodex asked %zu, served %zu",
                  &vpid, &counts.fence_nb, &counts.dmodex_asked, &counts.dmodex_served) != 4) {
    return std::nullopt;
  }
  return counts;
}

// Starts both nodes joined by a socketpair and waits for both to exit.
std::vector<NodeRun> run_two_nodes(const TempDir& dir, const std::string& mode, int rounds) {
  std::string node_binary =
      std::getenv("GROVE_PMIX_TEST_NODE") != nullptr ? std::getenv("GROVE_PMIX_TEST_NODE") : "";
  REQUIRE_FALSE(node_binary.empty());
  REQUIRE_FALSE(fence_client_path().empty());
  int link[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) == 0);
  std::vector<ChildProcess> nodes;
  ChildGuard guard(nodes);
  std::vector<NodeRun> runs(2);
  for (int vpid = 0; vpid < 2; ++vpid) {
    std::string out = dir.path() + "/node" + std::to_string(vpid) + ".out";
    std::string err = dir.path() + "/node" + std::to_string(vpid) + ".err";
    int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    ::fcntl(link[vpid], F_SETFD, 0);  // this node's end only is inherited
    Result<ChildProcess> node = spawn_child(
        {node_binary, "--vpid", std::to_string(vpid), "--peer-fd", std::to_string(link[vpid]),
         "--tmpdir", dir.path() + "/daemon" + std::to_string(vpid), "--client", fence_client_path(),
         "--rounds", std::to_string(rounds), "--mode", mode, "--deadline-ms",
         std::to_string(kNodeDeadline.count())},
        {}, out_fd, err_fd);
    ::close(link[vpid]);
    ::close(out_fd);
    ::close(err_fd);
    REQUIRE(node);
    nodes.push_back(*node);
    runs[vpid].out = out;
    runs[vpid].err = err;
  }
  test::wait_until([&] { return poll_child(nodes[0]) && poll_child(nodes[1]); }, kTestDeadline,
                   std::chrono::milliseconds(10));
  for (int vpid = 0; vpid < 2; ++vpid) {
    kill_child(nodes[vpid]);
    runs[vpid].process = nodes[vpid];
    runs[vpid].out = read_text_file(runs[vpid].out);
    runs[vpid].err = read_text_file(runs[vpid].err);
  }
  return runs;
}

std::vector<ClientSummary> require_clean_nodes(const std::vector<NodeRun>& runs, int rounds) {
  std::vector<ClientSummary> summaries;
  for (std::size_t vpid = 0; vpid < runs.size(); ++vpid) {
    const NodeRun& run = runs[vpid];
    INFO("node " << vpid << ": exit " << run.process.exit_code << " signal " << run.process.signal
                 << "\nstdout:\n"
                 << run.out << "\nstderr:\n"
                 << run.err);
    REQUIRE(run.process.exited);
    REQUIRE(run.process.signal == 0);
    REQUIRE(run.process.exit_code == 0);
    for (const std::string& line : lines_starting_with(run.out, "rank ")) {
      std::optional<ClientSummary> summary = parse_summary(line);
      REQUIRE(summary.has_value());
      CHECK(summary->node == "node" + std::to_string(vpid));
      CHECK(summary->local_size == 2);
      CHECK(summary->rounds == rounds);
      summaries.push_back(*summary);
    }
  }
  REQUIRE(summaries.size() == 4);
  std::set<std::uint32_t> ranks;
  for (const ClientSummary& summary : summaries) {
    CHECK(summary.size == 4);
    CHECK(summary.digest == summaries.front().digest);
    CHECK(summary.modex_bytes == summaries.front().modex_bytes);
    ranks.insert(summary.rank);
  }
  CHECK(ranks.size() == 4);
  return summaries;
}

}  // namespace

TEST_CASE("two daemons: collecting fences go through fence_nb on both servers", "[pmix]") {
  TempDir dir("grove-pmix-two");
  std::vector<NodeRun> runs = run_two_nodes(dir, "collect", 3);
  std::vector<ClientSummary> summaries = require_clean_nodes(runs, 3);
  CHECK(summaries.front().modex_bytes > 0);
  for (const NodeRun& run : runs) {
    std::optional<NodeCounts> counts = parse_node_line(run.out);
    REQUIRE(counts.has_value());
    CHECK(counts->fence_nb == 3);
    CHECK(counts->dmodex_asked == 0);  // collected data answers every get
  }
}

TEST_CASE("two daemons: barriers go through fence_nb on both servers", "[pmix]") {
  TempDir dir("grove-pmix-two");
  std::vector<NodeRun> runs = run_two_nodes(dir, "barrier", 3);
  std::vector<ClientSummary> summaries = require_clean_nodes(runs, 3);
  CHECK(summaries.front().modex_bytes == 0);
  for (const NodeRun& run : runs) {
    std::optional<NodeCounts> counts = parse_node_line(run.out);
    REQUIRE(counts.has_value());
    CHECK(counts->fence_nb == 3);
  }
}

TEST_CASE("two daemons: without collection, remote values come by direct modex", "[pmix]") {
  TempDir dir("grove-pmix-two");
  std::vector<NodeRun> runs = run_two_nodes(dir, "no-collect", 3);
  std::vector<ClientSummary> summaries = require_clean_nodes(runs, 3);
  CHECK(summaries.front().modex_bytes > 0);
  for (const NodeRun& run : runs) {
    std::optional<NodeCounts> counts = parse_node_line(run.out);
    REQUIRE(counts.has_value());
    CHECK(counts->fence_nb == 3);
    CHECK(counts->dmodex_asked > 0);
    CHECK(counts->dmodex_served > 0);
  }
}

}  // namespace grove::pmix_test
