#include <catch2/catch.hpp>

#include "support/temp_dir.h"
#include "util/param_registry.h"
#include "util/param_sources.h"
#include "util/standard_params.h"

using namespace grove;
using grove::test::TempDir;

namespace {

ParamRegistry standard() {
  ParamRegistry registry;
  register_standard_params(registry);
  return registry;
}

}  // namespace

TEST_CASE("standard parameters exist with the seed's defaults", "[params]") {
  ParamRegistry registry = standard();
  CHECK(registry.get_int("rml_base_radix") == 64);
  CHECK(registry.get_int("rml_base_radix2") == 4);
  CHECK(registry.get_bool("grpcomm_low_radix_release"));
  CHECK(registry.get_int("rml_base_verbose") == 0);
  CHECK(registry.get_int("grpcomm_base_verbose") == 0);
  CHECK_FALSE(registry.get_bool("grpcomm_enable_timing"));
  CHECK(registry.get_int("grpcomm_release_delay_ms") == 0);
  CHECK(registry.get_int("runtime_num_worker_threads") == 0);
  for (const ParamEntry* entry : registry.entries()) {
    CHECK(entry->origin.kind == ParamSourceKind::default_value);
    CHECK_FALSE(entry->spec.description.empty());
  }
}

TEST_CASE("every source overrides the one before it", "[params]") {
  TempDir dir;
  dir.write("home/.grove/mca-params.conf",
            "# user defaults\n"
            "rml_base_radix = 10\n"
            "rml_base_radix2 = 3\n"
            "grpcomm_release_delay_ms = 7\n"
            "grpcomm_base_verbose = 1\n");
  std::string param_file = dir.write("job.conf",
                                     "rml_base_radix = 20\n"
                                     "rml_base_radix2 = 5\n"
                                     "grpcomm_release_delay_ms = 8\n");
  ParamRegistry registry = standard();
  ParamInputs inputs;
  inputs.home_directory = dir.path() + "/home";
  inputs.param_files = {param_file};
  inputs.environment = {"PATH=/bin", "GROVE_MCA_rml_base_radix=30", "GROVE_MCA_rml_base_radix2=6"};
  inputs.command_line = {{"rml_base_radix", "40"}};
  REQUIRE(load_params(registry, inputs));

  CHECK(registry.get_int("rml_base_radix") == 40);
  CHECK(registry.find("rml_base_radix")->origin.kind == ParamSourceKind::command_line);
  CHECK(registry.get_int("rml_base_radix2") == 6);
  CHECK(registry.find("rml_base_radix2")->origin.kind == ParamSourceKind::environment);
  CHECK(registry.find("rml_base_radix2")->origin.detail == "GROVE_MCA_rml_base_radix2");
  CHECK(registry.get_int("grpcomm_release_delay_ms") == 8);
  CHECK(registry.find("grpcomm_release_delay_ms")->origin.kind == ParamSourceKind::param_file);
  CHECK(registry.find("grpcomm_release_delay_ms")->origin.detail == param_file + ":3");
  CHECK(registry.get_int("grpcomm_base_verbose") == 1);
  CHECK(registry.find("grpcomm_base_verbose")->origin.kind == ParamSourceKind::user_file);
  CHECK(registry.find("rml_base_verbose")->origin.kind == ParamSourceKind::default_value);
}

TEST_CASE("a value in a parameter file may carry a trailing comment", "[params]") {
  TempDir dir;
  std::string file = dir.write("job.conf",
                               "rml_base_radix = 8   # a wide routing tree\n"
                               "rml_base_radix2 = 3#not a comment, so not a number\n"
                               "plm_ssh_agent = ssh -p 2222 # the swarm's port\n");
  ParamRegistry registry = standard();
  ParamInputs inputs;
  inputs.param_files = {file};
  auto status = load_params(registry, inputs);
  // '#' inside a word is part of the value: "3#not..." is no number.
  REQUIRE_FALSE(status);
  CHECK_THAT(status.error().message, Catch::Contains(file + ":2"));

  std::string fixed = dir.write("fixed.conf",
                                "rml_base_radix = 8   # a wide routing tree\n"
                                "rml_base_radix2 = 3\t# the release radix\n"
                                "plm_ssh_agent = ssh -p 2222 # the swarm's port\n");
  inputs.param_files = {fixed};
  REQUIRE(load_params(registry, inputs));
  CHECK(registry.get_int("rml_base_radix") == 8);
  CHECK(registry.get_int("rml_base_radix2") == 3);
  CHECK(registry.get_string("plm_ssh_agent") == "ssh -p 2222");
}

TEST_CASE("a later command-line value wins over an earlier one", "[params]") {
  ParamRegistry registry = standard();
  ParamInputs inputs;
  inputs.command_line = {{"rml_base_radix2", "2"}, {"rml_base_radix2", "3"}};
  REQUIRE(load_params(registry, inputs));
  CHECK(registry.get_int("rml_base_radix2") == 3);
}

TEST_CASE("type errors name the parameter, the value, the source and the expectation", "[params]") {
  ParamRegistry registry = standard();
  auto status =
      registry.set("rml_base_radix", "abc", ParamOrigin{ParamSourceKind::command_line, "--mca"});
  REQUIRE_FALSE(status);
  const std::string& message = status.error().message;
  CHECK_THAT(message, Catch::Contains("rml_base_radix"));
  CHECK_THAT(message, Catch::Contains("'abc'"));
  CHECK_THAT(message, Catch::Contains("command line"));
  CHECK_THAT(message, Catch::Contains("an integer in [2, 65535]"));
  // The failed set leaves the value alone.
  CHECK(registry.get_int("rml_base_radix") == 64);

  SECTION("below the minimum") {
    auto low = registry.set("rml_base_radix2", "1", ParamOrigin{});
    REQUIRE_FALSE(low);
    CHECK_THAT(low.error().message, Catch::Contains("in [2, 65535]"));
  }
  SECTION("not a boolean") {
    auto bad = registry.set("grpcomm_low_radix_release", "maybe", ParamOrigin{});
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.error().message, Catch::Contains("a boolean"));
  }
  SECTION("trailing garbage in an integer") {
    CHECK_FALSE(registry.set("rml_base_radix", "12x", ParamOrigin{}));
    CHECK_FALSE(registry.set("rml_base_radix", "", ParamOrigin{}));
    CHECK_FALSE(registry.set("rml_base_radix", "99999999999999999999", ParamOrigin{}));
  }
  SECTION("booleans accept the usual spellings") {
    for (const char* text : {"false", "0", "no", "off", "FALSE"}) {
      REQUIRE(registry.set("grpcomm_low_radix_release", text, ParamOrigin{}));
      CHECK_FALSE(registry.get_bool("grpcomm_low_radix_release"));
    }
  }
  SECTION("sizes take suffixes") {
    REQUIRE(registry.set("grpcomm_compress_threshold", "64k", ParamOrigin{}));
    CHECK(registry.get_size("grpcomm_compress_threshold") == 65536);
    REQUIRE(registry.set("grpcomm_compress_threshold", "10KB", ParamOrigin{}));
    CHECK(registry.get_size("grpcomm_compress_threshold") == 10000);
    CHECK_FALSE(registry.set("grpcomm_compress_threshold", "10 parsecs", ParamOrigin{}));
  }
}

TEST_CASE("an unknown name is an error that suggests the closest known name", "[params]") {
  ParamRegistry registry = standard();
  auto status = registry.set("rml_base_radx", "4",
                             ParamOrigin{ParamSourceKind::environment, "GROVE_MCA_rml_base_radx"});
  REQUIRE_FALSE(status);
  CHECK_THAT(status.error().message, Catch::Contains("unknown parameter 'rml_base_radx'"));
  CHECK_THAT(status.error().message, Catch::Contains("did you mean 'rml_base_radix'?"));
  CHECK_THAT(status.error().message, Catch::Contains("GROVE_MCA_rml_base_radx"));

  auto far = registry.set("completely_unrelated_thing", "1", ParamOrigin{});
  REQUIRE_FALSE(far);
  CHECK_THAT(far.error().message, !Catch::Contains("did you mean"));
}

TEST_CASE("bad entries in files and the environment stop loading with their location", "[params]") {
  TempDir dir;
  ParamRegistry registry = standard();
  SECTION("malformed line") {
    std::string file = dir.write("bad.conf", "rml_base_radix = 8\nthis line has no equals\n");
    ParamInputs inputs;
    inputs.param_files = {file};
    auto status = load_params(registry, inputs);
    REQUIRE_FALSE(status);
    CHECK_THAT(status.error().message, Catch::Contains(file + ":2"));
  }
  SECTION("bad value in a file names file and line") {
    std::string file = dir.write("bad.conf", "\n\nrml_base_radix2 = zero\n");
    ParamInputs inputs;
    inputs.param_files = {file};
    auto status = load_params(registry, inputs);
    REQUIRE_FALSE(status);
    CHECK_THAT(status.error().message, Catch::Contains(file + ":3"));
    CHECK_THAT(status.error().message, Catch::Contains("rml_base_radix2"));
  }
  SECTION("missing --param-file") {
    ParamInputs inputs;
    inputs.param_files = {dir.path() + "/nope.conf"};
    auto status = load_params(registry, inputs);
    REQUIRE_FALSE(status);
    CHECK_THAT(status.error().message, Catch::Contains("nope.conf"));
  }
  SECTION("missing user file is fine") {
    ParamInputs inputs;
    inputs.home_directory = dir.path() + "/nobody";
    CHECK(load_params(registry, inputs));
  }
  SECTION("unknown environment parameter") {
    ParamInputs inputs;
    inputs.environment = {"GROVE_MCA_grpcomm_enable_timnig=1"};
    auto status = load_params(registry, inputs);
    REQUIRE_FALSE(status);
    CHECK_THAT(status.error().message, Catch::Contains("grpcomm_enable_timing"));
  }
}

TEST_CASE("non-default parameters are handed to children and round-trip", "[params]") {
  ParamRegistry parent = standard();
  ParamInputs inputs;
  inputs.environment = {"GROVE_MCA_rml_base_radix2=2"};
  inputs.command_line = {{"grpcomm_low_radix_release", "no"}, {"rml_base_radix", "64"}};
  REQUIRE(load_params(parent, inputs));
  // Set to its default value on purpose: it still came from a source, so it is passed.
  auto pairs = parent.non_defaults();
  REQUIRE(pairs.size() == 3);
  CHECK(pairs[0] == std::pair<std::string, std::string>{"grpcomm_low_radix_release", "false"});
  CHECK(pairs[1] == std::pair<std::string, std::string>{"rml_base_radix", "64"});
  CHECK(pairs[2] == std::pair<std::string, std::string>{"rml_base_radix2", "2"});

  std::vector<std::string> args = parent.child_arguments();
  REQUIRE(args.size() == 9);
  ParamRegistry child = standard();
  ParamInputs child_inputs;
  for (std::size_t i = 0; i < args.size(); i += 3) {
    REQUIRE(args[i] == "--mca");
    child_inputs.command_line.emplace_back(args[i + 1], args[i + 2]);
  }
  REQUIRE(load_params(child, child_inputs));
  CHECK(child.get_int("rml_base_radix2") == 2);
  CHECK_FALSE(child.get_bool("grpcomm_low_radix_release"));
}
