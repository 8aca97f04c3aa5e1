// DVMs across hosts: grove start over ssh on a namespace swarm (one network
// namespace per host, each with its own hostname and a real sshd), real
// daemons, real PMIx clients and Open MPI programs. Nothing is mocked.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "support/cpu_affinity.h"
#include "support/dvm.h"
#include "support/wait.h"
#include "swarm/swarm_checks.h"
#include "swarm/swarm_harness.h"

using namespace grove::test;
using namespace std::chrono_literals;

namespace {

std::string fence_client() {
  return binary_from_env("GROVE_PMIX_FENCE_CLIENT");
}

// `grove start` over ssh with this hostfile, every launch logged.
DvmStart over_ssh(Swarm& swarm, const std::string& hostfile_text, std::vector<std::string> extra) {
  static int count = 0;
  DvmStart start;
  start.args = {"--hostfile",
                swarm.write("hosts-" + std::to_string(++count), hostfile_text),
                "--mca",
                "plm_ssh_agent",
                swarm.ssh_agent(),
                "--mca",
                "plm_base_verbose",
                "1"};
  start.args.insert(start.args.end(), extra.begin(), extra.end());
  return start;
}

std::string hostfile(int first, int last, int slots) {
  std::string text = "# written by the test\n";
  for (int host = first; host <= last; ++host)
    text += "node" + std::to_string(host) + " slots=" + std::to_string(slots) + "\n";
  return text;
}

}  // namespace

TEST_CASE("ssh tree spawn, radix 2: nine hosts, a PMIx fence job, a clean stop", "[swarm]") {
  Swarm swarm(9);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  Dvm dvm(swarm.place(0), over_ssh(swarm, hostfile(0, 8, 2), {"--mca", "rml_base_radix", "2"}));
  REQUIRE(dvm.ready());
  const std::string log = dvm.controller().err();
  INFO(log);
  // Three levels of launches below the controller: 0 -> 1,2; 1 -> 3,4; 3 -> 7,8.
  CHECK(std::regex_search(
      log, std::regex(R"(grove controller node0:\d+\] [^\n]*starting daemon 1 on node1)")));
  CHECK(std::regex_search(
      log, std::regex(R"(groved vpid 1 node1:\d+\] [^\n]*starting daemon 3 on node3)")));
  CHECK(std::regex_search(
      log, std::regex(R"(groved vpid 3 node3:\d+\] [^\n]*starting daemon 7 on node7)")));
  CHECK(std::regex_search(
      log, std::regex(R"(groved vpid 2 node2:\d+\] [^\n]*starting daemon 6 on node6)")));

  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 9);
  const cpu_set_t mine = affinity_of(0);
  for (const auto& daemon : status["daemons"]) {
    unsigned vpid = daemon["vpid"].get<unsigned>();
    CHECK(daemon["host"] == "node" + std::to_string(vpid));
    CHECK(daemon["state"] == "up");
    // Each host is its own: every daemon discovers its own topology.
    CHECK(daemon["topology"] == "discovered");
    // But every "host" here is this machine (same kernel boot id): each
    // daemon, launched by the controller or by a relay, binds to its own CPU.
    if (vpid > 0 && CPU_COUNT(&mine) > 1) {
      const auto tids = threads_of(daemon["pid"].get<int>());
      CHECK(tids.size() >= 2);
      for (pid_t tid : tids) {
        const cpu_set_t set = affinity_of(tid);
        CHECK(CPU_COUNT(&set) == 1);
        CHECK(CPU_ISSET(nth_cpu(mine, static_cast<int>(vpid)), &set));
      }
    }
  }

  auto job = dvm.grove({"run", "-n", "18", fence_client(), "--rounds", "3", "--max-bytes", "4096"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 18);
  for (const auto& [rank, entry] : results) {
    CHECK(entry.first == results[0].first);                    // everyone saw the same data
    CHECK(entry.second == "node" + std::to_string(rank / 2));  // two slots per host, in order
  }

  // Ranks of bound daemons start with every CPU again.
  auto where = dvm.grove({"run", "-n", "9", "--map-by", "node", "--bind-to", "none", "sh", "-c",
                          "grep Cpus_allowed_list /proc/self/status"});
  REQUIRE(where.exit_code == 0);
  CHECK(count_occurrences(where.out, own_cpus_allowed_line() + "\n") == 9);

  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("ssh, Bruck fences: jobs with data over six hosts, a subset, a barrier with data",
          "[swarm]") {
  Swarm swarm(6);
  REQUIRE(swarm.ok());
  INFO(swarm.error());
  Dvm dvm(swarm.place(0),
          over_ssh(swarm, hostfile(0, 5, 2), {"--mca", "grpcomm_fence_topology", "bruck"}));
  REQUIRE(dvm.ready());
  // 12 ranks on six hosts: each fence an exchange of three rounds among six daemons.
  auto job = dvm.grove({"run", "-n", "12", fence_client(), "--rounds", "3", "--max-bytes", "8192"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  auto results = fence_results(job.out);
  REQUIRE(results.size() == 12);
  for (const auto& [rank, entry] : results)
    CHECK(entry.first == results[0].first);  // everyone saw the same data
  // Three ranks on three hosts: an exchange among those three daemons only.
  auto subset = dvm.grove({"run", "-n", "3", "--map-by", "node", fence_client(), "--rounds", "2"});
  INFO(subset.out << subset.err);
  REQUIRE(subset.exit_code == 0);
  CHECK(fence_results(subset.out).size() == 3);
  CHECK(dvm.bench("barrier", "64KB", 3)["spans_us"].size() == 3);
  auto status = dvm.status();
  std::uint64_t exchanges = 0, rollups = 0;
  for (const auto& entry : status["engine_total"]) {
    if (entry["type"] == "fence-exchange") exchanges += entry["frames"].get<std::uint64_t>();
    if (entry["type"] == "fence-rollup") rollups += entry["frames"].get<std::uint64_t>();
  }
  CHECK(exchanges > 0);
  CHECK(rollups == 0);
  dvm.stop();
  CHECK(dvm.controller().wait_exit(30s) == 0);
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("ssh at radix 64 and flat: an Open MPI job with two ranks per host", "[swarm][mpi]") {
  Swarm swarm(9);
  REQUIRE(swarm.ok());
  for (const char* flat : {"false", "true"}) {
    INFO("plm_ssh_no_tree_spawn " << flat);
    // The controller's host is not in the list: it holds no ranks. One slot
    // per host, two ranks per host all the same: ppr ignores slots.
    Dvm dvm(swarm.place(0),
            over_ssh(swarm, hostfile(1, 8, 1), {"--mca", "plm_ssh_no_tree_spawn", flat}));
    REQUIRE(dvm.ready());
    const std::string log = dvm.controller().err();
    INFO(log);
    // At radix 64 the controller starts all eight either way.
    CHECK_FALSE(
        std::regex_search(log, std::regex(R"(groved vpid \d+ [^\]]*\] [^\n]*starting daemon)")));
    auto mpi = dvm.grove(
        {"run", "-n", "16", "--map-by", "ppr:2:node", binary_from_env("GROVE_MPI_COLLECTIVES")});
    INFO(mpi.out << mpi.err);
    CHECK(mpi.exit_code == 0);
    for (int rank = 0; rank < 16; ++rank) {
      CHECK_THAT(mpi.out, Catch::Contains("mpi rank " + std::to_string(rank) +
                                          " of 16: allreduce 136 alltoall ok barrier ok"));
    }
    auto fence =
        dvm.grove({"run", "-n", "16", "--map-by", "ppr:2:node", fence_client(), "--rounds", "2"});
    CHECK_THAT(fence.err, !Catch::Contains("oversubscribed"));
    auto results = fence_results(fence.out);
    REQUIRE(results.size() == 16);
    for (const auto& [rank, entry] : results)
      CHECK(entry.second == "node" + std::to_string(1 + rank / 2));
    dvm.stop();
    CHECK(wait_gone(swarm, "groved").empty());
  }
}

TEST_CASE("ssh start failures name the host and leave nothing running", "[swarm]") {
  Swarm swarm(6);
  REQUIRE(swarm.ok());
  SECTION("a host without groved") {
    const std::string groved = binary_from_env("GROVE_GROVED");
    REQUIRE(swarm.hide(4, groved.substr(0, groved.rfind('/'))));
    Dvm dvm(swarm.place(0), over_ssh(swarm, hostfile(1, 5, 1), {"--mca", "rml_base_radix", "2"}));
    CHECK(dvm.controller().wait_exit(60s) == 1);
    const std::string err = dvm.controller().err();
    INFO(err);
    CHECK_THAT(
        err, Catch::Contains("cannot start daemon 4 (node4): ssh to node4 exited with status 127"));
    CHECK_THAT(err, Catch::Contains("not found"));
  }
  SECTION("a host whose sshd is down") {
    REQUIRE(swarm.stop_sshd(3));
    Dvm dvm(swarm.place(0), over_ssh(swarm, hostfile(1, 5, 1), {}));
    CHECK(dvm.controller().wait_exit(60s) == 1);
    const std::string err = dvm.controller().err();
    INFO(err);
    CHECK_THAT(err, Catch::Contains("cannot start daemon 3 (node3): ssh to node3 exited with "
                                    "status 255 (ssh could not connect)"));
    CHECK_THAT(err, Catch::Contains("Connection refused"));
  }
  SECTION("a bad hostfile line") {
    Dvm dvm(swarm.place(0), over_ssh(swarm, "node1\nnode2 slots=two\n", {}));
    CHECK(dvm.controller().wait_exit(30s) == 1);
    CHECK_THAT(dvm.controller().err(), Catch::Contains(":2: 'slots=two': expected a count"));
  }
  CHECK(wait_gone(swarm, "groved").empty());
}

TEST_CASE("every process of one host killed mid-job: the job fails naming it, the DVM goes on",
          "[swarm]") {
  Swarm swarm(7);
  REQUIRE(swarm.ok());
  Dvm dvm(swarm.place(0), over_ssh(swarm, hostfile(0, 6, 2), {"--mca", "rml_base_radix", "2"}));
  REQUIRE(dvm.ready());
  // Every rank says where it runs, then waits; the kill lands once all 14
  // have said so. node1 is vpid 1, the parent of 3 and 4 in the routing tree
  // and the daemon that started them: its subtree must stay.
  auto job = dvm.start_grove(
      {"run", "-n", "14", "/bin/sh", "-c", "echo running on $(hostname); exec sleep 300"});
  auto count_running = [&] { return count_occurrences(job->out(), "running on"); };
  wait_until([&] { return count_running() >= 14; }, 60s, 100ms);
  REQUIRE(count_running() == 14);
  REQUIRE(swarm.kill_host(1));
  CHECK(job->wait_exit(60s) != 0);
  INFO(job->out() << job->err());
  CHECK_THAT(job->err(),
             Catch::Contains("daemon 1 (node1), which hosted ranks of this job, was lost"));

  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 7);
  for (const auto& daemon : status["daemons"]) {
    unsigned vpid = daemon["vpid"].get<unsigned>();
    CHECK(daemon["state"] == (vpid == 1 ? "failed" : "up"));
  }
  // The tree view: node1's slot went to a daemon of its subtree.
  auto tree = dvm.grove({"status", "--tree"});
  INFO(tree.out);
  CHECK(tree.exit_code == 0);
  CHECK_THAT(tree.out, Catch::Contains("routing tree, radix 2:"));
  CHECK_THAT(tree.out, Catch::Contains("4 node4 (up, promoted)"));
  CHECK_THAT(tree.out, Catch::Contains("lost: 1 (node1)"));
  CHECK_THAT(tree.out, Catch::Contains("\n    3 node3 (up)"));
  // Round trips show for the daemons whose counters answered the status.
  CHECK(std::regex_search(tree.out, std::regex(R"(node\d \(up[^)]*\) rtt \d+ us)")));
  auto next = dvm.grove({"run", "-n", "12", fence_client(), "--rounds", "2"});
  INFO(next.out << next.err);
  CHECK(next.exit_code == 0);
  auto results = fence_results(next.out);
  CHECK(results.size() == 12);
  for (const auto& [rank, entry] : results)
    CHECK(entry.second != "node1");
  dvm.stop();
  CHECK(wait_gone(swarm, "groved").empty());
  CHECK(wait_gone(swarm, "sleep 300").empty());
}

TEST_CASE("the install under --prefix is used where this groved's path does not exist", "[swarm]") {
  Swarm swarm(3);
  REQUIRE(swarm.ok());
  const std::string groved = binary_from_env("GROVE_GROVED");
  const std::string build_dir = groved.substr(0, groved.rfind('/'));
  // An install of its own under the swarm's directory; the build tree is
  // hidden on the remote hosts, so only the prefix can work there.
  const std::string prefix = swarm.dir() + "/opt/grove";
  REQUIRE(
      run_program({"/bin/mkdir", "-p", prefix + "/bin", prefix + "/lib", prefix + "/libexec/grove"})
          .exit_code == 0);
  REQUIRE(run_program({"/bin/cp", groved, prefix + "/bin/groved"}).exit_code == 0);
  // Where an install puts the program every rank starts as (docs/jobs.md).
  REQUIRE(run_program({"/bin/cp", build_dir + "/grove-exec", prefix + "/libexec/grove/grove-exec"})
              .exit_code == 0);
  REQUIRE(swarm.hide(1, build_dir));
  REQUIRE(swarm.hide(2, build_dir));
  {
    Dvm without(swarm.place(0), over_ssh(swarm, hostfile(1, 2, 1), {}));
    CHECK(without.controller().wait_exit(60s) == 1);
    CHECK_THAT(without.controller().err(), Catch::Contains("exited with status 127"));
  }
  CHECK(wait_gone(swarm, "groved").empty());
  Dvm dvm(swarm.place(0), over_ssh(swarm, hostfile(1, 2, 1), {"--prefix", prefix}));
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  REQUIRE(status["daemons"].size() == 3);
  auto job = dvm.grove({"run", "-n", "2", "/bin/hostname"});
  CHECK(job.exit_code == 0);
  CHECK_THAT(job.out, Catch::Contains("node1") && Catch::Contains("node2"));
  CHECK_FALSE(swarm.find_processes(prefix + "/bin/groved").empty());
  dvm.stop();
  CHECK(wait_gone(swarm, "groved").empty());
}
