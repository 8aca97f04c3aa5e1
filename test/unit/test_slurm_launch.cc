// Reading a Slurm allocation, choosing part of it, and the srun command the
// Slurm launcher runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "plm/slurm_allocation.h"
#include "plm/spawn_plan.h"
#include "plm/srun_launcher.h"

using namespace grove;

namespace {
SlurmEnvironment allocation(std::string nodelist, std::string cpus) {
  return SlurmEnvironment{"42", std::move(nodelist), std::move(cpus)};
}

std::vector<std::string> names_of(const std::vector<HostEntry>& hosts) {
  std::vector<std::string> names;
  for (const auto& host : hosts)
    names.push_back(host.name);
  return names;
}
}  // namespace

TEST_CASE("the Slurm variables are read with their older spellings as fallbacks", "[plm]") {
  std::map<std::string, std::string> variables = {
      {"SLURM_JOBID", "9"}, {"SLURM_NODELIST", "a[1-2]"}, {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}};
  auto lookup = [&](const char* name) -> const char* {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
  SlurmEnvironment environment = read_slurm_environment(lookup);
  CHECK(environment.job_id == "9");
  CHECK(environment.nodelist == "a[1-2]");
  CHECK(environment.in_allocation());
  variables["SLURM_JOB_ID"] = "10";
  variables["SLURM_JOB_NODELIST"] = "b1";
  environment = read_slurm_environment(lookup);
  CHECK(environment.job_id == "10");
  CHECK(environment.nodelist == "b1");
  CHECK_FALSE(read_slurm_environment([](const char*) { return nullptr; }).in_allocation());
}

TEST_CASE("SLURM_JOB_CPUS_PER_NODE expands to one count per node", "[plm]") {
  CHECK(*parse_cpus_per_node("2(x3),1", 4) == std::vector<std::uint32_t>{2, 2, 2, 1});
  CHECK(*parse_cpus_per_node("8", 1) == std::vector<std::uint32_t>{8});
  CHECK(*parse_cpus_per_node("1,4(x1),2", 3) == std::vector<std::uint32_t>{1, 4, 2});
  CHECK_THAT(parse_cpus_per_node("2(x3)", 4).error().message, Catch::Contains("names 3 nodes"));
  CHECK_THAT(parse_cpus_per_node("2(x3)", 2).error().message, Catch::Contains("more nodes"));
  for (const char* bad : {"", "x", "2(3)", "2(x)", "2(x0)", "0", "2(x2", "-1", "2,,1"}) {
    INFO(bad);
    CHECK_FALSE(parse_cpus_per_node(bad, 3));
  }
}

TEST_CASE("an allocation's hosts come in Slurm's order with its CPUs as slots", "[plm]") {
  auto hosts = allocation_hosts(allocation("node[08-10],login1", "2(x3),1"));
  REQUIRE(hosts);
  CHECK(names_of(*hosts) == std::vector<std::string>{"node08", "node09", "node10", "login1"});
  CHECK((*hosts)[0].slots == 2u);
  CHECK((*hosts)[3].slots == 1u);
  // Without a CPU count the slots are the daemon's cores, as for ssh.
  auto bare = allocation_hosts(allocation("n1", ""));
  REQUIRE(bare);
  CHECK_FALSE((*bare)[0].slots);
  CHECK_THAT(allocation_hosts(SlurmEnvironment{}).error().message,
             Catch::Contains("SLURM_JOB_ID is not set"));
  CHECK_THAT(allocation_hosts(allocation("", "1")).error().message,
             Catch::Contains("SLURM_JOB_NODELIST is not set"));
  CHECK_THAT(allocation_hosts(allocation("n[3-1]", "1")).error().message,
             Catch::Contains("SLURM_JOB_NODELIST"));
}

TEST_CASE("a partial allocation keeps Slurm's order and the allocation's slots", "[plm]") {
  auto whole = *allocation_hosts(allocation("n[1-4]", "2(x4)"));
  std::vector<HostEntry> listed = {HostEntry{"n3", "", std::nullopt, std::nullopt},
                                   HostEntry{"n1", "", 1u, std::nullopt}};
  auto selected = select_from_allocation(whole, listed);
  REQUIRE(selected);
  // srun numbers a step's nodes in the allocation's order, whatever ours.
  CHECK(names_of(*selected) == std::vector<std::string>{"n1", "n3"});
  CHECK((*selected)[0].slots == 1u);
  CHECK((*selected)[1].slots == 2u);
  listed.push_back(HostEntry{"n9", "", std::nullopt, std::nullopt});
  CHECK_THAT(select_from_allocation(whole, listed).error().message,
             Catch::Contains("'n9' is not in the Slurm allocation"));
  CHECK_THAT(select_from_allocation(whole, {HostEntry{"n2", "me", std::nullopt, std::nullopt}})
                 .error()
                 .message,
             Catch::Contains("user@"));
}

TEST_CASE("a daemon started by srun takes its vpid from SLURM_NODEID", "[plm]") {
  CHECK(*vpid_from_slurm(1, "0") == 1u);
  CHECK(*vpid_from_slurm(1, "15") == 16u);
  CHECK_THAT(vpid_from_slurm(1, nullptr).error().message, Catch::Contains("not set"));
  for (const char* bad : {"", "x", "-1", "1 ", "99999999999"}) {
    INFO(bad);
    CHECK_FALSE(vpid_from_slurm(1, bad));
  }
}

TEST_CASE("the srun command starts one daemon per remote host of the plan", "[plm]") {
  std::vector<HostEntry> hosts;
  for (const char* name : {"n0", "n1", "n2", "n3"})
    hosts.push_back(HostEntry{name, "", std::nullopt, std::nullopt});
  // The controller runs on n0 and holds its ranks there: srun starts 3.
  SrunLaunchConfig config;
  config.srun = {"srun", "--quiet"};
  config.extra_args = {"--overlap"};
  config.param_arguments = {"--mca", "rml_base_radix", "2"};
  config.bootstrap.plan = *plan_dvm(hosts, "n0", 2, false);
  config.bootstrap.remote = RemoteSettings{"/opt/grove/bin/groved", "", "10.0.0.1:4000"};
  const std::vector<std::string> expected = {"srun",
                                             "--quiet",
                                             "--nodes=3",
                                             "--ntasks=3",
                                             "--ntasks-per-node=1",
                                             "--nodelist=n1,n2,n3",
                                             "--kill-on-bad-exit=1",
                                             "--mpi=none",
                                             "--cpu-bind=none",
                                             "--job-name=grove-dvm",
                                             "--overlap",
                                             "/opt/grove/bin/groved",
                                             "--vpid-from-slurm",
                                             "1",
                                             "--dvm-size",
                                             "4",
                                             "--controller",
                                             "10.0.0.1:4000",
                                             "--bootstrap-fd",
                                             "0",
                                             "--mca",
                                             "rml_base_radix",
                                             "2"};
  CHECK(srun_argv(config) == expected);
  // The controller's host outside the list: every listed host gets a daemon.
  config.bootstrap.plan = *plan_dvm(hosts, "login", 2, false);
  auto argv = srun_argv(config);
  CHECK(argv[2] == "--nodes=4");
  CHECK(argv[5] == "--nodelist=n0,n1,n2,n3");
  CHECK(std::find(argv.begin(), argv.end(), "5") != argv.end());  // --dvm-size 5
  CHECK(std::find(argv.begin(), argv.end(), "--join") == argv.end());
  // grove grow --activate: a step of its own for the newcomers, vpids 3 and 4
  // of a DVM grown to 5, each joining.
  config.first_vpid = 3;
  config.count = 2;
  config.joining = true;
  config.extra_args.clear();
  argv = srun_argv(config);
  CHECK(argv[2] == "--nodes=2");
  CHECK(argv[3] == "--ntasks=2");
  CHECK(argv[5] == "--nodelist=n2,n3");
  auto from = std::find(argv.begin(), argv.end(), "--vpid-from-slurm");
  REQUIRE(from != argv.end());
  CHECK(*(from + 1) == "3");
  CHECK(std::find(argv.begin(), argv.end(), "--join") != argv.end());
  CHECK(std::find(argv.begin(), argv.end(), "--overlap") != argv.end());
}

TEST_CASE("with a prefix srun's environment puts its bin and lib first", "[plm]") {
  SrunLaunchConfig config;
  CHECK(srun_environment(config, "/usr/bin", nullptr).empty());
  config.bootstrap.remote.prefix = "/opt/grove";
  CHECK(srun_environment(config, "/usr/bin", "/x") ==
        std::vector<std::string>{"PATH=/opt/grove/bin:/usr/bin",
                                 "LD_LIBRARY_PATH=/opt/grove/lib:/x"});
  // No empty entry (the current directory to ld.so) when unset.
  CHECK(srun_environment(config, "/usr/bin", "")[1] == "LD_LIBRARY_PATH=/opt/grove/lib");
}
