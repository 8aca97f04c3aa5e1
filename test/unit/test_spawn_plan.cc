// The spawn plan: vpids onto hosts, and who starts whom (tree or flat).
#include <catch2/catch.hpp>

#include <unistd.h>
#include <algorithm>

#include "plm/bootstrap.h"
#include "plm/spawn_plan.h"
#include "plm/ssh_launcher.h"
#include "rml/transport/handshake.h"

using namespace grove;

namespace {
std::vector<HostEntry> hosts(std::initializer_list<const char*> names) {
  std::vector<HostEntry> list;
  for (const char* name : names)
    list.push_back(HostEntry{name, "", std::nullopt, std::nullopt});
  return list;
}
}  // namespace

TEST_CASE("spawn plan: the controller's host joins the list as vpid 0", "[plm]") {
  auto listed = hosts({"n1", "head", "n2"});
  listed[1].slots = 3;
  auto plan = plan_dvm(listed, "head", 64, true);
  REQUIRE(plan);
  REQUIRE(plan->size() == 3);
  CHECK(plan->daemons[0].host.name == "head");
  CHECK(plan->daemons[0].holds_ranks);
  CHECK(plan->daemons[0].host.slots == 3u);
  CHECK(plan->daemons[1].host.name == "n1");
  CHECK(plan->daemons[2].host.name == "n2");

  auto remote_only = plan_dvm(hosts({"n1", "n2"}), "head", 64, true);
  REQUIRE(remote_only);
  REQUIRE(remote_only->size() == 3);
  CHECK_FALSE(remote_only->daemons[0].holds_ranks);
  CHECK(remote_only->daemons[1].host.name == "n1");
}

TEST_CASE("spawn plan: tree spawn follows the routing tree, flat is all from the root", "[plm]") {
  auto plan = plan_dvm(hosts({"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}), "head", 2, true);
  REQUIRE(plan);
  REQUIRE(plan->size() == 9);
  CHECK(plan->launches(0) == std::vector<Vpid>{1, 2});
  CHECK(plan->launches(1) == std::vector<Vpid>{3, 4});
  CHECK(plan->launches(3) == std::vector<Vpid>{7, 8});
  CHECK(plan->launches(8).empty());
  // Every daemon but the root is started exactly once.
  std::vector<int> started(plan->size(), 0);
  for (Vpid vpid = 0; vpid < plan->size(); ++vpid) {
    for (Vpid child : plan->launches(vpid))
      ++started[child];
  }
  CHECK(started[0] == 0);
  CHECK(std::all_of(started.begin() + 1, started.end(), [](int n) { return n == 1; }));

  plan->tree_spawn = false;
  CHECK(plan->launches(0).size() == 8);
  CHECK(plan->launches(1).empty());
}

TEST_CASE("bootstrap: secret and plan survive the pipe; a short one is an error", "[plm]") {
  auto plan = plan_dvm(hosts({"n1", "n2"}), "head", 4, true);
  REQUIRE(plan);
  plan->daemons[2].host.user = "bob";
  plan->daemons[2].host.slots = 7;
  Bootstrap sent{std::vector<std::byte>(kDvmSecretSize, std::byte{0x5a}), *plan,
                 RemoteSettings{"/opt/grove/bin/groved", "/opt/grove", "10.0.0.1:4000"}};
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(write_bootstrap(fds[1], sent));
  close(fds[1]);
  auto got = read_bootstrap(fds[0]);
  close(fds[0]);
  REQUIRE(got);
  CHECK(got->secret == sent.secret);
  REQUIRE(got->plan);
  CHECK(got->plan->size() == 3);
  CHECK(got->plan->radix == 4);
  CHECK(got->plan->daemons[2].host.ssh_target() == "bob@n2");
  CHECK(got->plan->daemons[2].host.slots == 7u);
  CHECK_FALSE(got->plan->daemons[0].holds_ranks);
  CHECK(got->remote.prefix == "/opt/grove");
  CHECK(got->remote.controller_endpoint == "10.0.0.1:4000");

  REQUIRE(pipe(fds) == 0);
  REQUIRE(write(fds[1], sent.secret.data(), 10) == 10);
  close(fds[1]);
  auto short_read = read_bootstrap(fds[0]);
  close(fds[0]);
  CHECK_FALSE(short_read);
}

TEST_CASE("ssh command: quoted, with the prefix on PATH and the library path", "[plm]") {
  auto plan = plan_dvm(hosts({"n1", "n2"}), "head", 64, true);
  REQUIRE(plan);
  plan->daemons[2].host.user = "alice";
  SshLaunchConfig config;
  config.agent = {"ssh", "-F", "/tmp/my config"};
  config.param_arguments = {"--mca", "rml_base_radix", "64"};
  config.bootstrap.plan = *plan;
  config.bootstrap.remote = RemoteSettings{"/opt/it's/bin/groved", "/opt/it's", "10.1.1.1:99"};
  auto argv = ssh_argv(config, 2);
  REQUIRE(argv.size() == 10);
  CHECK(argv[0] == "ssh");
  CHECK(argv[2] == "/tmp/my config");
  CHECK(argv[3] == "-o");
  CHECK(argv[4] == "BatchMode=yes");
  CHECK(argv[6] == "ConnectTimeout=10");
  CHECK(argv[8] == "alice@n2");
  const std::string& command = argv[9];
  CHECK(command.find("env PATH='/opt/it'\\''s/bin':\"$PATH\"") != std::string::npos);
  CHECK(command.find(
            "LD_LIBRARY_PATH='/opt/it'\\''s/lib'\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"") !=
        std::string::npos);
  CHECK(command.find("'/opt/it'\\''s/bin/groved' '--vpid' '2' '--dvm-size' '3'") !=
        std::string::npos);
  CHECK(command.find("'--bootstrap-fd' '0' '--mca' 'rml_base_radix' '64'") != std::string::npos);
  CHECK(command.find("--join") == std::string::npos);
  // A daemon grown into a running DVM joins it.
  config.joining = true;
  CHECK(remote_daemon_command(config, 2).find("'--bootstrap-fd' '0' '--join' '--mca'") !=
        std::string::npos);
  CHECK(shell_quote("a'b") == "'a'\\''b'");
  CHECK(shell_word("-n4") == "-n4");
  CHECK(shell_word("a b") == "'a b'");
  CHECK(shell_word("") == "''");
  CHECK(shell_word("$HOME") == "'$HOME'");
}
