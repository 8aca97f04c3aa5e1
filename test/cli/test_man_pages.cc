// Manual pages and bash completion, written by grove and groved from their
// own commands and options.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <sstream>

#include "support/subprocess.h"
#include "support/temp_dir.h"

using namespace grove::test;

namespace {

RunResult run(const char* binary, std::vector<std::string> args, std::string input = "") {
  args.insert(args.begin(), binary_from_env(binary));
  RunOptions options;
  options.unset_env.push_back("HOME");
  options.timeout = std::chrono::seconds(30);
  options.stdin_text = std::move(input);
  return run_program(args, options);
}

// Every request line (starting with '.') uses a macro the pages are written with.
void check_roff(const std::string& page) {
  static const std::set<std::string> macros = {"TH", "SH", "SS", "TP", "PP", "B"};
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] != '.') continue;
    INFO(line);
    CHECK(macros.count(line.substr(1, line.find(' ') - 1)) == 1);
  }
}

// The words bash completes for `grove WORDS...` (the last one partial).
std::string complete(const std::string& script_path, const std::string& words, int cword) {
  RunOptions options;
  options.timeout = std::chrono::seconds(30);
  RunResult result = run_program(
      {"/bin/bash", "-c",
       "source " + script_path + "; COMP_WORDS=(" + words +
           "); COMP_CWORD=" + std::to_string(cword) + "; _grove; echo \"${COMPREPLY[*]}\""},
      options);
  REQUIRE(result.exit_code == 0);
  return result.out;
}

}  // namespace

TEST_CASE("grove(1) documents every command and option --help shows", "[cli][man]") {
  RunResult page = run("GROVE_BIN", {"--man-page", "grove"});
  REQUIRE(page.exit_code == 0);
  check_roff(page.out);
  CHECK_THAT(page.out, Catch::StartsWith(".TH GROVE 1 "));
  RunResult help = run("GROVE_BIN", {"--help"});
  // Each subcommand --help lists appears as a section of its own.
  std::regex command_line(R"(\n  ([a-z]+) +\S)");
  int commands = 0;
  for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), command_line);
       it != std::sregex_iterator(); ++it, ++commands) {
    INFO((*it)[1]);
    CHECK_THAT(page.out, Catch::Contains(".SS \"grove " + (*it)[1].str()));
  }
  CHECK(commands >= 10);
  // Options of a command, with their descriptions, as `grove run --help` has them.
  CHECK_THAT(page.out,
             Catch::Contains("\\fB\\-\\-bind\\-to\\fR \\fITEXT:{none,core,hwthread,socket,"
                             "core:overload\\-allowed"));
  CHECK_THAT(page.out, Catch::Contains(".SS \"grove ps, jobs\""));
  CHECK_THAT(page.out, Catch::Contains("\\fB\\-\\-signal\\fR"));
}

TEST_CASE("groved(8) and grove-mca-params(7)", "[cli][man]") {
  RunResult daemon = run("GROVE_GROVED", {"--man-page"});
  REQUIRE(daemon.exit_code == 0);
  check_roff(daemon.out);
  CHECK_THAT(daemon.out, Catch::StartsWith(".TH GROVED 8 ") &&
                             Catch::Contains("\\fB\\-\\-vpid\\fR") &&
                             Catch::Contains("\\fB\\-\\-cpu\\-slot\\fR"));

  RunResult params = run("GROVE_BIN", {"--man-page", "mca-params"});
  REQUIRE(params.exit_code == 0);
  check_roff(params.out);
  CHECK_THAT(params.out, Catch::StartsWith(".TH GROVE-MCA-PARAMS 7 "));
  RunResult info = run("GROVE_BIN", {"info", "--json"});
  REQUIRE(info.exit_code == 0);
  auto listed = nlohmann::json::parse(info.out);
  const auto& entries = listed.is_array() ? listed : listed["params"];
  REQUIRE(entries.size() > 20);
  for (const auto& entry : entries) {
    std::string name = entry["name"].get<std::string>();
    std::string escaped;
    for (char c : name)
      escaped += c == '-' ? std::string("\\-") : std::string(1, c);
    INFO(name);
    CHECK_THAT(params.out, Catch::Contains("\\fB" + escaped + "\\fR ("));
  }
}

TEST_CASE("bash completes grove's commands and each command's options", "[cli][man]") {
  RunResult script = run("GROVE_BIN", {"--completion", "bash"});
  REQUIRE(script.exit_code == 0);
  TempDir dir("grove-completion");
  const std::string path = dir.write("grove", script.out);
  CHECK(complete(path, "grove st", 1) == "start stop status\n");
  CHECK(complete(path, "grove run --bi", 2) == "--bind-to\n");
  CHECK(complete(path, "grove --mca x y ki", 4) == "kill\n");
  CHECK(complete(path, "grove kill 3 --si", 3) == "--signal\n");
  CHECK(complete(path, "grove jobs --a", 2) == "--all\n");
}
