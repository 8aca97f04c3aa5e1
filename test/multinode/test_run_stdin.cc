// grove run's stdin reaches the ranks --stdin names, in order, whole.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

RunResult run_with_input(Dvm& dvm, std::vector<std::string> args, const std::string& input) {
  args.insert(args.begin(),
              {grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid())});
  RunOptions options;
  options.extra_env = {"TMPDIR=" + dvm.tmpdir()};
  options.stdin_text = input;
  options.timeout = std::chrono::seconds(60);
  return run_program(args, options);
}

// The lines a rank wrote ("R ..."), in order: ranks' lines interleave.
std::string lines_of(const std::string& out, const std::string& rank) {
  std::istringstream in(out);
  std::string mine;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(rank + " ", 0) == 0) mine += line + "\n";
  }
  return mine;
}

}  // namespace

TEST_CASE("grove run's stdin goes to rank 0, or the ranks --stdin names", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const std::string echo_lines =
      "while read line; do echo \"$PMIX_RANK got $line\"; done; echo \"$PMIX_RANK end\"";

  RunResult first =
      run_with_input(dvm, {"-n", "2", "--map-by", "node", "sh", "-c", echo_lines}, "one\ntwo\n");
  CHECK(first.exit_code == 0);
  CHECK(lines_of(first.out, "0") == "0 got one\n0 got two\n0 end\n");
  CHECK(lines_of(first.out, "1") == "1 end\n");  // rank 1 read /dev/null

  RunResult all = run_with_input(
      dvm, {"-n", "3", "--map-by", "node", "--stdin", "all", "sh", "-c", echo_lines}, "x\ny\n");
  CHECK(all.exit_code == 0);
  for (const char* rank : {"0", "1", "2"}) {
    const std::string r = rank;
    CHECK(lines_of(all.out, r) == r + " got x\n" + r + " got y\n" + r + " end\n");
  }

  RunResult one = run_with_input(
      dvm, {"-n", "2", "--map-by", "node", "--stdin", "1", "sh", "-c", echo_lines}, "z\n");
  CHECK(one.exit_code == 0);
  CHECK(lines_of(one.out, "1") == "1 got z\n1 end\n");
  CHECK(lines_of(one.out, "0") == "0 end\n");

  RunResult none = run_with_input(dvm, {"-n", "1", "--stdin", "none", "cat"}, "ignored\n");
  CHECK(none.exit_code == 0);
  CHECK(none.out.empty());

  RunResult beyond = run_with_input(dvm, {"-n", "2", "--stdin", "2", "true"}, "");
  CHECK(beyond.exit_code == 1);
  CHECK_THAT(beyond.err, Catch::Contains("--stdin 2: the job has ranks 0 to 1"));
}

TEST_CASE("stdin reaches a rank byte for byte, and a rank that stops reading ends nothing",
          "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  TempDir scratch("grove-stdin");
  // 3 MiB of random bytes (NULs and invalid UTF-8 among them), to rank 0 on
  // the controller's daemon and to rank 1 on the other.
  std::string data(3u << 20, '\0');
  std::mt19937 random(7);
  for (char& byte : data)
    byte = static_cast<char>(random() & 0xff);
  const std::string input = scratch.write("input", data);
  for (const std::string rank : {"0", "1"}) {
    const std::string copy = scratch.path() + "/copy" + rank;
    RunOptions options;
    options.extra_env = {"TMPDIR=" + dvm.tmpdir()};
    options.timeout = std::chrono::seconds(120);
    RunResult result =
        run_program({"/bin/sh", "-c",
                     grove_binary() + " run --dvm " + std::to_string(dvm.controller().pid()) +
                         " -n 2 --map-by node --stdin " + rank + " sh -c 'cat > " + copy +
                         ".$PMIX_RANK' < " + input},
                    options);
    INFO(result.err);
    CHECK(result.exit_code == 0);
    std::ifstream file(copy + "." + rank, std::ios::binary);
    const std::string copied((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
    CHECK(copied.size() == data.size());
    CHECK((copied == data));  // not printed: 3 MiB
  }
  // head reads one line of many and exits: grove run stops sending and ends.
  std::string lines;
  for (int i = 0; i < 200000; ++i)
    lines += std::to_string(i) + "\n";
  const std::string many = scratch.write("many", lines);
  RunOptions options;
  options.extra_env = {"TMPDIR=" + dvm.tmpdir()};
  RunResult head =
      run_program({"/bin/sh", "-c",
                   grove_binary() + " run --dvm " + std::to_string(dvm.controller().pid()) +
                       " -n 1 head -1 < " + many},
                  options);
  CHECK(head.exit_code == 0);
  CHECK(head.out == "0\n");
}
