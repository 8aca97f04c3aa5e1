// Host lists as users write them: PRRTE hostfiles, --host, Slurm hostlists.
#include <catch2/catch.hpp>

#include "plm/host_list.h"
#include "plm/slurm_hostlist.h"

using namespace grove;

TEST_CASE("hostfile: hosts, slots, users, comments and blank lines", "[plm]") {
  auto hosts = parse_hostfile(
      "# the cluster\n"
      "node01 slots=4 max_slots=8\n"
      "\n"
      "   alice@node02   slots=2   # inline comment\n"
      "node03\n",
      "hosts.txt");
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 3);
  CHECK((*hosts)[0].name == "node01");
  CHECK((*hosts)[0].slots == 4u);
  CHECK((*hosts)[0].max_slots == 8u);
  CHECK((*hosts)[1].name == "node02");
  CHECK((*hosts)[1].user == "alice");
  CHECK((*hosts)[1].ssh_target() == "alice@node02");
  CHECK((*hosts)[1].slots == 2u);
  CHECK((*hosts)[2].name == "node03");
  CHECK_FALSE((*hosts)[2].slots.has_value());  // its core count, later
}

TEST_CASE("hostfile: a host on several lines adds up its slots", "[plm]") {
  auto hosts = parse_hostfile("a\na\na slots=2\nb\n", "f");
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 2);
  CHECK((*hosts)[0].name == "a");
  CHECK((*hosts)[0].slots == 4u);
  CHECK_FALSE((*hosts)[1].slots.has_value());
}

TEST_CASE("hostfile: bad lines name the file and the line", "[plm]") {
  auto check = [](const char* text, const char* expected) {
    auto hosts = parse_hostfile(text, "cluster.hosts");
    REQUIRE_FALSE(hosts);
    INFO(hosts.error().message);
    CHECK(hosts.error().message.find(expected) != std::string::npos);
  };
  check("a\nb slots=x\n", "cluster.hosts:2: 'slots=x'");
  check("a\n\nb cores=2\n", "cluster.hosts:3: 'cores': unknown key");
  check("-oProxyCommand=evil\n", "cluster.hosts:1: '-oProxyCommand=evil': not a host name");
  check("a b\n", "cluster.hosts:1: 'b': expected slots=N");
  check("a slots=4 max_slots=2\n", "cluster.hosts:1: slots=4 exceeds max_slots=2");
  check("# nothing\n\n", "cluster.hosts: no hosts");
  check("a slots=0\n", "expected a count");
  check("@a\n", "not a user name");
}

TEST_CASE("--host: HOST[:SLOTS] lists", "[plm]") {
  auto hosts = parse_host_option("a,b:4,bob@c,a");
  REQUIRE(hosts);
  REQUIRE(hosts->size() == 3);
  CHECK((*hosts)[0].name == "a");
  CHECK((*hosts)[0].slots == 2u);  // listed twice
  CHECK((*hosts)[1].slots == 4u);
  CHECK((*hosts)[2].ssh_target() == "bob@c");
  CHECK_FALSE((*hosts)[2].slots.has_value());
  CHECK_FALSE(parse_host_option("a,,b"));
  CHECK_FALSE(parse_host_option("a:zero"));
  CHECK_FALSE(parse_host_option("a;rm -rf /"));
}

TEST_CASE("Slurm hostlists expand in Slurm's order", "[plm]") {
  using List = std::vector<std::string>;
  auto expand = [](const char* text) {
    auto hosts = expand_slurm_hostlist(text);
    REQUIRE(hosts);
    return *hosts;
  };
  CHECK(expand("node1") == List{"node1"});
  CHECK(expand("node[01-04,7]") == List{"node01", "node02", "node03", "node04", "node7"});
  CHECK(expand("node[08-10]") == List{"node08", "node09", "node10"});
  CHECK(expand("a[1-2],login,b[3]") == List{"a1", "a2", "login", "b3"});
  CHECK(expand("r[1-2]n[1-2]") == List{"r1n1", "r1n2", "r2n1", "r2n2"});
  CHECK(expand("rack[1-2]-gpu") == List{"rack1-gpu", "rack2-gpu"});
  for (const char* bad : {"", "node[", "node]", "node[1-", "node[3-1]", "node[a-b]", "n[[1]]",
                          "node[1,,2]", ",", "node[-2]"}) {
    INFO(bad);
    CHECK_FALSE(expand_slurm_hostlist(bad));
  }
}
