// grove run's output options: --timestamp-output and --output-filename.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <regex>
#include <sstream>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "2026-12-02 14:30:15.123456" (local time) as microseconds since the epoch.
std::int64_t parse_stamp(const std::string& text) {
  std::tm local{};
  std::istringstream in(text.substr(0, 19));
  in >> std::get_time(&local, "%Y-%m-%d %H:%M:%S");
  local.tm_isdst = -1;
  return static_cast<std::int64_t>(std::mktime(&local)) * 1'000'000 + std::stoll(text.substr(20));
}

}  // namespace

TEST_CASE("--timestamp-output stamps every line with when its daemon read it", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // Whole seconds: the stamp's second is compared, its fraction only parsed.
  const std::int64_t before = now_us() / 1'000'000 * 1'000'000;
  RunResult result = dvm.grove({"run", "-n", "2", "--timestamp-output", "--tag-output", "sh", "-c",
                                "echo one $PMIX_RANK; echo two $PMIX_RANK >&2"});
  const std::int64_t after = now_us();
  REQUIRE(result.exit_code == 0);
  const std::regex line(
      R"(\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6})\] \[1,([01])\]<(stdout|stderr)>: (one|two) ([01]))");
  int lines = 0;
  for (const std::string* stream : {&result.out, &result.err}) {
    std::istringstream in(*stream);
    for (std::string text; std::getline(in, text);) {
      if (text.rfind("grove:", 0) == 0) continue;  // the CLI's own
      std::smatch match;
      REQUIRE(std::regex_match(text, match, line));
      CHECK(match[2] == match[5]);  // the tag's rank wrote it
      CHECK((match[3] == "stdout") == (match[4] == "one"));
      const std::int64_t stamp = parse_stamp(match[1]);
      CHECK(stamp >= before);
      CHECK(stamp <= after);
      ++lines;
    }
  }
  CHECK(lines == 4);
}

TEST_CASE("--output-filename writes each rank's streams to their own files", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  TempDir scratch("grove-output");
  const std::string dir = scratch.path() + "/out";
  // A file left by an earlier DVM's job 1 is replaced, not appended to.
  scratch.write("out/1/rank.0/stdout", "stale\n");
  RunResult result =
      dvm.grove({"run", "-n", "3", "--output-filename", dir, "sh", "-c",
                 "echo out $PMIX_RANK; echo err $PMIX_RANK >&2; echo more $PMIX_RANK"});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.find("out ") == std::string::npos);  // nothing on the terminal
  CHECK(result.err.find("err ") == std::string::npos);
  for (int rank = 0; rank < 3; ++rank) {
    const std::string r = std::to_string(rank);
    const std::filesystem::path ranked = std::filesystem::path(dir) / "1" / ("rank." + r);
    CHECK(read_file(ranked / "stdout") == "out " + r + "\nmore " + r + "\n");
    CHECK(read_file(ranked / "stderr") == "err " + r + "\n");
  }
  // The next job of the DVM has its own directory; timestamps go into files too.
  REQUIRE(
      dvm.grove({"run", "-n", "1", "--output-filename", dir, "--timestamp-output", "echo", "again"})
          .exit_code == 0);
  CHECK(std::regex_match(read_file(std::filesystem::path(dir) / "2" / "rank.0" / "stdout"),
                         std::regex(R"(\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\] again\n)")));

  scratch.write("file", "");
  RunResult refused =
      dvm.grove({"run", "-n", "1", "--output-filename", scratch.path() + "/file/sub", "true"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("--output-filename " + scratch.path() +
                                          "/file/sub: cannot make the directory"));
}

TEST_CASE("grove run's stdout is what the ranks wrote, byte for byte", "[run]") {
  // `x=$(grove run ...)` must hold the program's output and nothing of
  // grove's own: its words go to stderr, on a one-shot run (which starts and
  // stops a DVM of its own), after an exec that failed, after Ctrl-C, and
  // on a running DVM.
  TempDir tmp("grove-stdout");
  RunOptions options;
  options.extra_env = {tmp.env()};
  options.timeout = std::chrono::seconds(60);
  SECTION("one-shot") {
    RunResult run = run_program({grove_binary(), "run", "-n", "1", "echo", "42"}, options);
    CHECK(run.exit_code == 0);
    CHECK(run.out == "42\n");
    CHECK_THAT(run.err, Catch::Contains("grove: DVM stopped (1 daemon)"));
  }
  SECTION("one-shot, a program that does not exist") {
    RunResult run =
        run_program({grove_binary(), "run", "-n", "2", "/nonexistent/program"}, options);
    CHECK(run.exit_code == 127);
    CHECK(run.out.empty());
    CHECK_THAT(run.err, Catch::Contains("/nonexistent/program"));
  }
  SECTION("one-shot, ended by Ctrl-C") {
    BackgroundProcess run({grove_binary(), "run", "-n", "1", "sh", "-c", "echo up; exec sleep 300"},
                          {tmp.env()});
    REQUIRE(run.wait_for("up", std::chrono::seconds(60)));
    REQUIRE(kill(run.pid(), SIGINT) == 0);
    CHECK(run.wait_exit(std::chrono::seconds(60)) == 130);
    CHECK(run.out() == "up\n");
  }
  SECTION("on a running DVM, stdout and stderr of two ranks") {
    Dvm dvm(2);
    REQUIRE(dvm.ready());
    auto run =
        dvm.grove({"run", "-n", "2", "--map-by", "node", "sh", "-c", "echo out; echo err >&2"});
    CHECK(run.exit_code == 0);
    CHECK(run.out == "out\nout\n");
    CHECK(run.err == "err\nerr\n");
  }
}
