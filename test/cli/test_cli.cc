// Runs the built `grove` binary the way a user does.
#include <signal.h>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>

#include "support/background_process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace grove::test;

namespace {

RunResult run_grove(std::vector<std::string> args, RunOptions options = {}) {
  args.insert(args.begin(), binary_from_env("GROVE_BIN"));
  options.unset_env.push_back("HOME");  // no stray ~/.grove/mca-params.conf
  options.timeout = std::chrono::seconds(30);
  return run_program(args, options);
}

RunOptions with_env(std::vector<std::string> env) {
  RunOptions options;
  options.extra_env = std::move(env);
  return options;
}

}  // namespace

TEST_CASE("grove --help and --version", "[cli]") {
  auto help = run_grove({"--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("info"));
  CHECK_THAT(help.out, Catch::Contains("model"));
  CHECK_THAT(help.out, Catch::Contains("--mca"));

  // The version, the git revision built, and the libraries as loaded.
  const std::regex version_lines(
      R"(^grove \d+\.\d+\.\d+ \(git [0-9a-z-]+\)\n  libpmix: OpenPMIx 4\.\d+[^\n]*\n)"
      R"(  libevent: 2\.[^\n]+\n  hwloc: 2\.\d+\.\d+ \(run-time API 2\.\d+\.\d+\)\n$)");
  auto version = run_grove({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(std::regex_match(version.out, version_lines));
  auto groved = run_program({binary_from_env("GROVE_GROVED"), "--version"});
  CHECK(groved.exit_code == 0);
  CHECK(groved.out == "groved" + version.out.substr(std::string("grove").size()));
  // grove info opens with the same lines.
  auto info = run_grove({"info"});
  CHECK(info.exit_code == 0);
  CHECK(info.out.rfind(version.out + "\n", 0) == 0);

  auto info_help = run_grove({"info", "--help"});
  CHECK(info_help.exit_code == 0);
  CHECK_THAT(info_help.out, Catch::Contains("--param"));
}

TEST_CASE("grove with no command or an unknown command fails with a message", "[cli]") {
  auto none = run_grove({});
  CHECK(none.exit_code != 0);
  CHECK_FALSE(none.err.empty());
  auto unknown = run_grove({"frobnicate"});
  CHECK(unknown.exit_code != 0);
  CHECK_THAT(unknown.err, Catch::Contains("frobnicate"));
}

TEST_CASE("grove info lists every required parameter with its source", "[cli]") {
  auto result =
      run_grove({"info", "--param", "all", "--json"}, with_env({"GROVE_MCA_rml_base_radix2=3"}));
  REQUIRE(result.exit_code == 0);
  auto list = nlohmann::json::parse(result.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& item : list)
    by_name[item["name"]] = item;
  for (const char* name : {"rml_base_radix", "rml_base_radix2", "grpcomm_low_radix_release",
                           "rml_base_verbose", "grpcomm_base_verbose", "grpcomm_enable_timing",
                           "grpcomm_release_delay_ms", "runtime_num_worker_threads"}) {
    INFO(name);
    REQUIRE(by_name.count(name) == 1);
    CHECK_FALSE(by_name[name]["description"].get<std::string>().empty());
  }
  CHECK(by_name["rml_base_radix"]["default"] == "64");
  CHECK(by_name["rml_base_radix"]["source"] == "default");
  CHECK(by_name["rml_base_radix2"]["value"] == "3");
  CHECK(by_name["rml_base_radix2"]["source"] == "environment");
}

TEST_CASE("grove info honours --mca and --prtemca, command line over environment", "[cli]") {
  auto result = run_grove({"info", "--param", "rml_base_radix2", "--mca", "rml_base_radix2", "2"},
                          with_env({"GROVE_MCA_rml_base_radix2=3"}));
  REQUIRE(result.exit_code == 0);
  CHECK_THAT(result.out, Catch::Contains("current: 2"));
  CHECK_THAT(result.out, Catch::Contains("source: command line"));

  auto synonym = run_grove({"--prtemca", "grpcomm_low_radix_release", "false", "info", "--param",
                            "grpcomm_low_radix_release"});
  REQUIRE(synonym.exit_code == 0);
  CHECK_THAT(synonym.out, Catch::Contains("current: false"));
}

TEST_CASE("a bad --mca value stops the CLI with the named error", "[cli]") {
  auto bad = run_grove({"info", "--mca", "rml_base_radix", "one"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("rml_base_radix"));
  CHECK_THAT(bad.err, Catch::Contains("'one'"));
  CHECK_THAT(bad.err, Catch::Contains("command line"));
  CHECK_THAT(bad.err, Catch::Contains("expected an integer in [2, 65535]"));

  auto typo = run_grove({"info", "--mca", "rml_base_radx", "4"});
  CHECK(typo.exit_code != 0);
  CHECK_THAT(typo.err, Catch::Contains("did you mean 'rml_base_radix'?"));

  auto bad_env = run_grove({"info"}, with_env({"GROVE_MCA_rml_base_radix2=1"}));
  CHECK(bad_env.exit_code != 0);
  CHECK_THAT(bad_env.err, Catch::Contains("GROVE_MCA_rml_base_radix2"));

  auto unknown_info = run_grove({"info", "--param", "grpcomm_low_radix_relase"});
  CHECK(unknown_info.exit_code != 0);
  CHECK_THAT(unknown_info.err, Catch::Contains("grpcomm_low_radix_release"));
}

TEST_CASE("grove model prints the seed's table and the crossover", "[cli]") {
  auto table = run_grove({"model"});
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("M* = B*c/t = 3906 bytes"));
  CHECK_THAT(table.out, Catch::Contains("N = 10000"));
  CHECK_THAT(table.out, Catch::Contains("256 MB"));

  auto json = run_grove({"model", "-N", "1024", "-M", "0", "--json"});
  REQUIRE(json.exit_code == 0);
  auto out = nlohmann::json::parse(json.out);
  REQUIRE(out["cells"].size() == 1);
  CHECK(out["cells"][0]["optimal_radix"] == 32);
  CHECK(out["cells"][0]["compare_over_optimal"].template get<double>() == Approx(1.5));

  // One N and one payload: the table ends with the parameter to set, the
  // same radix the JSON names optimal.
  auto advice = run_grove({"model", "-N", "1000", "-M", "10KB"});
  REQUIRE(advice.exit_code == 0);
  auto cell = nlohmann::json::parse(run_grove({"model", "-N", "1000", "-M", "10KB", "--json"}).out);
  const std::string radix = std::to_string(cell["cells"][0]["optimal_radix"].get<int>());
  CHECK_THAT(advice.out,
             Catch::EndsWith("for 1000 daemons and 10 KB releases: set rml_base_radix2=" + radix +
                             " (grove start --mca rml_base_radix2 " + radix +
                             "), with grpcomm_low_radix_release true (the default)\n"));
  CHECK_THAT(table.out,
             Catch::EndsWith("give one -N and one -M to be told the rml_base_radix2 to set\n"));

  auto bad = run_grove({"model", "--threads", "0"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--threads"));
}

TEST_CASE("grove topo draws both trees, as text and as dot", "[cli]") {
  auto text = run_grove({"topo", "-n", "8", "--radix", "2", "--radix2", "2", "--failed", "1"});
  REQUIRE(text.exit_code == 0);
  // The seed's example: 7 takes dead 1's slot, so 3 and 4 hang under it.
  CHECK_THAT(text.out, Catch::Contains("routing tree: radix 2, 8 daemons, 7 living, failed: 1"));
  CHECK_THAT(text.out, Catch::Contains("release tree: radix 2"));
  CHECK_THAT(text.out, Catch::Contains("0\n  7 *\n    3\n    4\n  2\n    5\n    6\n"));

  auto dot = run_grove({"topo", "-n", "10", "--tree", "release", "--format", "dot", "--mca",
                        "rml_base_radix2", "3"});
  REQUIRE(dot.exit_code == 0);
  CHECK_THAT(dot.out, Catch::StartsWith("digraph release_tree {"));
  CHECK_THAT(dot.out, Catch::Contains("radix 3"));
  CHECK_THAT(dot.out, Catch::Contains("d0 -> d3;"));
  CHECK_THAT(dot.out, Catch::Contains("d2 -> d9;"));
  CHECK_THAT(dot.out, !Catch::Contains("routing_tree"));

  // Both trees: one graph (dot draws only the first of several), a cluster
  // per tree, node names that do not collide.
  auto both = run_grove(
      {"topo", "-n", "6", "--format", "dot", "--radix", "2", "--radix2", "3", "--failed", "2"});
  REQUIRE(both.exit_code == 0);
  CHECK_THAT(both.out, Catch::StartsWith("digraph trees {"));
  CHECK(count_occurrences(both.out, "digraph") == 1);
  CHECK(count_occurrences(both.out, "{") == count_occurrences(both.out, "}"));
  CHECK_THAT(both.out, Catch::Contains("subgraph cluster_routing {"));
  CHECK_THAT(both.out, Catch::Contains("subgraph cluster_release {"));
  CHECK_THAT(both.out, Catch::Contains("label=\"routing tree, radix 2\""));
  CHECK_THAT(both.out, Catch::Contains("label=\"release tree, radix 3\""));
  CHECK_THAT(both.out, Catch::Contains("routing_d0 -> routing_d1;"));
  CHECK_THAT(both.out, Catch::Contains("release_d0 -> release_d1;"));
  CHECK_THAT(both.out, Catch::Contains("routing_d2 [label=\"2\", style=dashed"));
  CHECK(count_occurrences(both.out, " d0 ") == 0);  // no unprefixed node

  auto holes = run_grove({"topo", "--vpids", "0,2-4,9", "--tree", "routing", "--radix", "2"});
  REQUIRE(holes.exit_code == 0);
  CHECK_THAT(holes.out, Catch::Contains("0\n  2\n    4\n    9\n  3\n"));

  auto bad = run_grove({"topo", "-n", "4", "--failed", "0"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("controller"));
  auto missing = run_grove({"topo", "-n", "4", "--failed", "9"});
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Catch::Contains("not in the daemon set"));
}

TEST_CASE("grove run refuses an unknown option instead of running it as the program", "[cli]") {
  for (const std::string option : {"--bind-too", "--hosts", "-l"}) {
    auto result = run_grove({"run", option, "x", "-n", "1", "pwd"});
    INFO(option);
    CHECK(result.exit_code == 125);  // grove run's own usage error, never a job's status
    CHECK(result.out.empty());
    CHECK_THAT(result.err, Catch::Contains("unknown option '" + option + "'"));
    CHECK_THAT(result.err, Catch::Contains("grove run --help"));
  }
  // After the program, options are the program's own.
  auto after = run_grove({"run", "--np", "0", "sh", "--bind-too"});
  CHECK(after.exit_code == 125);
  CHECK_THAT(after.err, Catch::Contains("--np"));
  CHECK_THAT(after.err, !Catch::Contains("unknown option"));
}

TEST_CASE("grove run's usage errors exit 125 with the reason on stderr, --help exits 0", "[cli]") {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"run", "-n", "two", "true"},
                                             {"run", "-n", "1", "--map-by", "diagonal", "true"},
                                             {"run", "-n", "1"},
                                             {"run", "-n", "1", "--"},
                                             {"run", "-n", "1", "-x", "GROVE_SURELY_UNSET", "true"},
                                             {"run", "-n", "1", "-mca"}}) {
    auto result = run_grove(args);
    INFO(args.back());
    CHECK(result.exit_code == 125);
    CHECK(result.out.empty());
    CHECK_FALSE(result.err.empty());
  }
  auto help = run_grove({"run", "--help"});
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("Usage: grove run"));
  // mpirun's single-dash -mca reaches the parameter check like --mca.
  auto mca = run_grove({"run", "-mca", "rml_base_radix", "0", "-n", "1", "true"});
  CHECK(mca.exit_code != 0);
  CHECK_THAT(mca.err, Catch::Contains("rml_base_radix"));
  CHECK_THAT(mca.err, !Catch::Contains("unknown option"));
}

TEST_CASE("grove sim shows progress only where asked, and Ctrl-C reports the runs done", "[cli]") {
  // Piped (as here), the default draws nothing.
  auto quiet = run_grove({"sim", "-n", "300", "--runs", "3"});
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.empty());

  for (bool json : {false, true}) {
    INFO("json " << json);
    std::vector<std::string> args = {binary_from_env("GROVE_BIN"),
                                     "sim",
                                     "-n",
                                     "2000",
                                     "--runs",
                                     "1000000",
                                     "--progress",
                                     "always",
                                     "--trace",
                                     "0"};
    if (json) args.push_back("--json");
    BackgroundProcess sim(args, {});
    // The first progress line is written once the handler is in place.
    REQUIRE(sim.wait_for("grove sim: run 1/1000000, 0 events", std::chrono::seconds(30)));
    REQUIRE(kill(sim.pid(), SIGINT) == 0);
    CHECK(sim.wait_exit(std::chrono::seconds(60)) == 130);
    if (json) {
      auto out = nlohmann::json::parse(sim.out());
      CHECK(out["interrupted"] == true);
      CHECK(out["options"]["runs"] == 1000000);
      CHECK(out["runs_completed"].get<unsigned>() < 1000000u);
      CHECK(out["fence"]["count"] == out["runs_completed"]);  // one fence per completed run
    } else {
      std::smatch done;
      const std::string out = sim.out();
      REQUIRE(std::regex_search(
          out, done, std::regex(R"(interrupted by Ctrl-C after (\d+) of 1000000 runs)")));
      CHECK_THAT(out, Catch::Contains(done[1].str() + " run(s) from seed 1"));
      CHECK_THAT(out, Catch::Contains("all invariants held in " + done[1].str() + " run(s)"));
    }
  }
  auto bad = run_grove({"sim", "--progress", "sometimes"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--progress"));
}

TEST_CASE("grove sim moves membership both ways with --returns and --joins", "[cli]") {
  auto run = run_grove({"sim", "-n", "20", "--faults", "3", "--returns", "2", "--joins", "3",
                        "--rounds", "3", "--runs", "5", "--json"});
  REQUIRE(run.exit_code == 0);
  auto out = nlohmann::json::parse(run.out);
  CHECK(out["options"]["returns"] == 2);
  CHECK(out["options"]["joins"] == 3);
  CHECK(out["repairs"]["joined"] == 15);
  CHECK(out["runs_failed"] == 0);
  // Only a daemon that died can come back.
  auto bad = run_grove({"sim", "--faults", "1", "--returns", "2"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--returns 2: only daemons that die (--faults 1)"));
}

TEST_CASE("grove sim re-executes itself once with huge pages, with the same results", "[cli]") {
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  const bool kernel_gives = !mode.empty() && mode.find("[never]") == std::string::npos;
  auto sim = [](const std::string& huge_pages, RunOptions options = {}) {
    // Whatever this test's own environment holds, unless a case sets it.
    if (options.extra_env.empty()) options.unset_env.push_back("GLIBC_TUNABLES");
    options.unset_env.push_back("GROVE_SIM_REEXECUTED");
    auto run =
        run_grove({"sim", "-n", "500", "--faults", "2", "--json", "--huge-pages", huge_pages},
                  std::move(options));
    REQUIRE(run.exit_code == 0);
    return nlohmann::json::parse(run.out);
  };
  auto off = sim("off");
  auto on = sim("on");
  CHECK(off["huge_pages"] == false);
  CHECK(on["huge_pages"] == kernel_gives);
  // auto: off below 100,000 daemons.
  CHECK(sim("auto")["huge_pages"] == false);
  // A user's own tunables are kept beside it; one that names hugetlb wins.
  CHECK(sim("on", with_env({"GLIBC_TUNABLES=glibc.malloc.check=0"}))["huge_pages"] == kernel_gives);
  CHECK(sim("on", with_env({"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}))["huge_pages"] == false);
  // A parameter file that cannot be read twice (not a regular file) keeps
  // this process: the re-executed one would have lost its settings.
  RunOptions clean;
  clean.unset_env = {"GLIBC_TUNABLES", "GROVE_SIM_REEXECUTED"};
  TempDir dir;
  const std::string params = dir.path() + "/params.conf";
  std::ofstream(params) << "rml_base_radix2 = 8\n";
  auto once = run_grove({"sim", "-n", "500", "--json", "--huge-pages", "on", "--param-file",
                         "/dev/null", "--param-file", params},
                        clean);
  REQUIRE(once.exit_code == 0);
  CHECK(nlohmann::json::parse(once.out)["huge_pages"] == false);
  if (kernel_gives) CHECK_THAT(once.err, Catch::Contains("'/dev/null' is not a regular file"));
  auto twice = run_grove(
      {"sim", "-n", "500", "--json", "--huge-pages", "on", "--param-file", params}, clean);
  REQUIRE(twice.exit_code == 0);
  CHECK(nlohmann::json::parse(twice.out)["huge_pages"] == kernel_gives);
  CHECK(nlohmann::json::parse(twice.out)["options"]["radix2"] == 8);  // read after the exec too

  // Memory layout is not a result: everything else is the same.
  off.erase("huge_pages");
  on.erase("huge_pages");
  CHECK(on == off);

  auto bad = run_grove({"sim", "--huge-pages", "always"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--huge-pages"));
}

TEST_CASE("grove sim replays a run from every option it prints", "[cli]") {
  auto first = run_grove({"sim",  "--daemons", "12",  "--radix",  "2", "--radix2",
                          "3",    "--faults",  "2",   "--rounds", "2", "--alpha",
                          "40",   "-c",        "7.5", "--jitter", "3", "--compress-threshold",
                          "1024", "--seed",    "77",  "--json"});
  REQUIRE(first.exit_code == 0);
  auto again = run_grove({"sim",  "--daemons",
                          "12",   "--payload",
                          "1024", "--radix",
                          "2",    "--radix2",
                          "3",    "--low-radix-release",
                          "true", "--rounds",
                          "2",    "--faults",
                          "2",    "--release-delay-us",
                          "0",    "--release-delay-target",
                          "-1",   "--participants",
                          "1",    "--alpha",
                          "40",   "--copy-cost",
                          "7.5",  "--threads",
                          "8",    "--bandwidth",
                          "10",   "--jitter",
                          "3",    "--compress-threshold",
                          "1024", "--seed",
                          "77",   "--runs",
                          "1",    "--json"});
  REQUIRE(again.exit_code == 0);
  auto a = nlohmann::json::parse(first.out);
  auto b = nlohmann::json::parse(again.out);
  CHECK(a["events"] == b["events"]);
  CHECK(a["traffic"] == b["traffic"]);
}

TEST_CASE("grove start refuses bad host lists and launcher choices before starting anything",
          "[cli]") {
  grove::test::TempDir dir;
  auto refused = [&](std::vector<std::string> args, const std::string& expected) {
    RunOptions options;
    options.extra_env = {dir.env()};
    args.insert(args.begin(), "start");
    auto result = run_grove(args, options);
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Catch::Contains(expected));
  };
  refused({"--host", "a;reboot"}, "--host: 'a;reboot': not a host name");
  refused({"--host", "a:0"}, "expected HOST:SLOTS with a count");
  refused({"--hostfile", dir.path() + "/missing"}, "cannot read the hostfile");
  refused({"--hostfile", dir.write("bad.hosts", "n1 slots=2\nn2 max_slots=1 slots=3\n")},
          "bad.hosts:2: slots=3 exceeds max_slots=1");
  refused({"--launcher", "ssh"}, "--launcher ssh needs --host or --hostfile");
  refused({"--launcher", "local", "--host", "n1"}, "--launcher local starts daemons on this host");
  refused({"--local", "3", "--host", "n1"}, "--local and --host/--hostfile exclude each other");
  refused({"--launcher", "slurm"},
          "--launcher slurm: not inside a Slurm allocation (SLURM_JOB_ID is not set)");
  // Inside an allocation (its variables as salloc sets them), before srun.
  auto refused_in_allocation = [&](std::vector<std::string> args, const std::string& cpus,
                                   const std::string& expected) {
    RunOptions options;
    options.extra_env = {dir.env(), "SLURM_JOB_ID=77", "SLURM_JOB_NODELIST=n[1-3]",
                         "SLURM_JOB_CPUS_PER_NODE=" + cpus};
    args.insert(args.begin(), "start");
    auto result = run_grove(args, options);
    INFO(result.out << result.err);
    CHECK(result.exit_code == 1);
    CHECK_THAT(result.err, Catch::Contains(expected));
  };
  refused_in_allocation({"--host", "n2,n9"}, "2(x3)", "host 'n9' is not in the Slurm allocation");
  refused_in_allocation({}, "2(x2)", "names 2 nodes, the node list 3");
  refused_in_allocation({"--launcher", "slurm", "--local", "2"}, "1(x3)",
                        "--local starts daemons on this host only");
  // Nothing was started: no DVM directory appeared.
  auto status = run_grove({"status"}, RunOptions{{dir.env()}, {}, std::chrono::seconds(10), ""});
  CHECK(status.exit_code != 0);
}
