// grove run as a user runs it: output, status, errors, timeouts, a lost daemon.
#include <catch2/catch.hpp>

#include <regex>

#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <thread>

#include "dvm_harness.h"
#include "support/process_probe.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

RunResult run_on(Dvm& dvm, std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  return dvm.grove(args, std::chrono::seconds(60));
}

// Processes whose command line (NUL-separated, from /proc) satisfies `match`.
int count_processes(const std::function<bool(const std::string& cmdline)>& match) {
  int found = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    std::ifstream file(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (match(cmdline)) ++found;
  }
  return found;
}

// Processes whose command line contains `needle` anywhere.
int processes_running(const std::string& needle) {
  return count_processes(
      [&](const std::string& cmdline) { return cmdline.find(needle) != std::string::npos; });
}

// Processes whose command line starts with `prefix` (the program itself, not
// a launcher that names it among its arguments).
int processes_started_as(const std::string& prefix) {
  return count_processes([&](const std::string& cmdline) { return cmdline.rfind(prefix, 0) == 0; });
}

}  // namespace

TEST_CASE("grove run forwards every rank's output and exits with the job's status", "[run]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  SECTION("output, line by line, tagged") {
    auto result = run_on(dvm, {"-n", "8", "--map-by", "node", "--tag-output", "sh", "-c",
                               "echo out-line; echo err-line >&2; echo second"});
    CHECK(result.exit_code == 0);
    for (int rank = 0; rank < 8; ++rank) {
      std::string tag = "[1," + std::to_string(rank) + "]";
      CHECK_THAT(result.out, Catch::Contains(tag + "<stdout>: out-line\n"));
      CHECK_THAT(result.out, Catch::Contains(tag + "<stdout>: second\n"));
      CHECK_THAT(result.err, Catch::Contains(tag + "<stderr>: err-line\n"));
    }
    CHECK(count_occurrences(result.out, "out-line") == 8);
  }
  SECTION("untagged output, a partial last line, exported variables") {
    auto result = dvm.grove({"run", "-n", "2", "-x", "GROVE_TEST_VALUE=forty-two", "sh", "-c",
                             "printf \"value=$GROVE_TEST_VALUE\""});
    CHECK(result.exit_code == 0);
    CHECK(count_occurrences(result.out, "value=forty-two\n") == 2);
  }
  SECTION("the first non-zero exit is the job's status") {
    auto result = run_on(dvm, {"-n", "4", "sh", "-c", "exit 7"});
    CHECK(result.exit_code == 7);
    CHECK_THAT(result.err, Catch::Contains("exited with status 7"));
  }
  SECTION("a signal is named") {
    auto result = run_on(dvm, {"-n", "2", "sh", "-c", "kill -SEGV $$"});
    CHECK(result.exit_code == 128 + SIGSEGV);
    CHECK_THAT(result.err, Catch::Contains("killed by signal 11"));
    CHECK_THAT(result.err, Catch::Contains("Segmentation fault"));
  }
  SECTION("a program that cannot start is a clear error") {
    auto missing = run_on(dvm, {"-n", "3", "/no/such/program"});
    CHECK(missing.exit_code == 127);
    CHECK_THAT(missing.err, Catch::Contains("never started"));
    CHECK_THAT(missing.err, Catch::Contains("cannot execute '/no/such/program'"));
    auto not_executable = run_on(dvm, {"-n", "1", "/tmp"});
    CHECK(not_executable.exit_code == 127);
    CHECK_THAT(not_executable.err, Catch::Contains("Permission denied"));
  }
  SECTION("a rank's leftover child neither holds the job nor outlives it") {
    auto started = std::chrono::steady_clock::now();
    auto result = run_on(dvm, {"-n", "2", "sh", "-c", "sleep 97.25 & echo started"});
    CHECK(result.exit_code == 0);
    CHECK(count_occurrences(result.out, "started\n") == 2);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
    // The daemons end what a rank left behind when the job's cleanup reaches
    // them, which may be after grove run has returned: wait for that
    // (bounded), then check.
    const std::string leftover = std::string("sleep") + '\0' + "97.25";  // as in /proc/PID/cmdline
    wait_until([&] { return processes_running(leftover) == 0; }, std::chrono::seconds(10));
    CHECK(processes_running(leftover) == 0);
  }
  SECTION("--timeout kills a job that runs too long") {
    auto started = std::chrono::steady_clock::now();
    auto result = run_on(dvm, {"-n", "4", "--timeout", "1", "sleep", "30"});
    CHECK(result.exit_code == 124);
    CHECK_THAT(result.err, Catch::Contains("ran out of time"));
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(20));
  }
  // Whatever happened, the DVM runs the next job.
  auto next = run_on(dvm, {"-n", "4", "true"});
  CHECK(next.exit_code == 0);
}

TEST_CASE("ranks get the caller's environment and directory, not the DVM's", "[run]") {
  // The DVM was started elsewhere, with an environment of its own.
  TempDir started_in("grove-started-in");
  Dvm dvm(2, {}, {"GROVE_TEST_DAEMON_ONLY=daemon", "GROVE_TEST_BOTH=daemon"});
  REQUIRE(dvm.ready());
  TempDir work("grove-wdir");
  std::filesystem::create_directory(work.path() + "/sub");
  auto run = [&](std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(),
                {grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid())});
    RunOptions options;
    options.extra_env = {"TMPDIR=" + dvm.tmpdir(), "GROVE_TEST_CALLER=caller",
                         "GROVE_TEST_BOTH=caller", "PMIX_NAMESPACE=not-yours",
                         "PMIX_MCA_grove_test=tuned"};
    options.extra_env.insert(options.extra_env.end(), env.begin(), env.end());
    options.timeout = std::chrono::seconds(60);
    return run_program(args, options);
  };
  const std::string show =
      "echo caller=$GROVE_TEST_CALLER both=$GROVE_TEST_BOTH daemon=$GROVE_TEST_DAEMON_ONLY "
      "set=$GROVE_TEST_SET ns=$PMIX_NAMESPACE mca=$PMIX_MCA_grove_test pwd=$PWD real=$(pwd -P)";
  const std::string real_work = std::filesystem::canonical(work.path()).string();

  // By default: the caller's variables (over the daemon's), the caller's
  // directory, PWD that matches it, and PMIx variables from the job's own
  // server, never the caller's.
  auto forwarded = run({"-n", "2", "--map-by", "node", "--wdir", work.path(), "sh", "-c", show});
  INFO(forwarded.out << forwarded.err);
  REQUIRE(forwarded.exit_code == 0);
  const std::string expected_dir = "pwd=" + work.path() + " real=" + real_work;
  CHECK(count_occurrences(forwarded.out, "caller=caller both=caller daemon= set= ns=grove.") == 2);
  CHECK(count_occurrences(forwarded.out, " mca=tuned pwd=") ==
        2);  // PMIx tuning is the user's: it goes along
  CHECK(count_occurrences(forwarded.out, expected_dir) == 2);

  // --env and -x add to it; --wdir is made absolute and normal.
  auto relative = run({"-n", "1", "--env", "GROVE_TEST_SET=one", "-x", "GROVE_TEST_BOTH=x",
                       "--wdir", work.path() + "/sub/..", "sh", "-c", show});
  REQUIRE(relative.exit_code == 0);
  CHECK(count_occurrences(relative.out, "caller=caller both=x daemon= set=one") == 1);
  CHECK(count_occurrences(relative.out, expected_dir) == 1);

  // --no-forward-env: the daemons' environment plus -x and --env only.
  auto clean = run({"-n", "2", "--map-by", "node", "--no-forward-env", "-x", "GROVE_TEST_CALLER",
                    "--env", "GROVE_TEST_SET=two", "--wdir", work.path(), "sh", "-c", show});
  REQUIRE(clean.exit_code == 0);
  CHECK(count_occurrences(clean.out, "caller=caller both=daemon daemon=daemon set=two ns=grove.") ==
        2);
  CHECK(count_occurrences(clean.out, expected_dir) == 2);

  // A directory that is not there: the job fails at once, naming it.
  auto missing = run({"-n", "1", "--wdir", work.path() + "/nowhere", "true"});
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Catch::Contains(work.path() + "/nowhere"));
  auto bad = run({"-n", "1", "--env", "NOEQUALS", "true"});
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--env NOEQUALS: expected VAR=value"));
}

TEST_CASE("ranks are placed by slot or by node", "[run]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  auto by_node =
      run_on(dvm, {"-n", "6", "--map-by", "node", "--tag-output", "sh", "-c", "echo $PPID"});
  REQUIRE(by_node.exit_code == 0);
  // Each rank's parent is the daemon that started it: three daemons, two ranks each.
  std::map<std::string, int> per_parent;
  std::istringstream lines(by_node.out);
  for (std::string line; std::getline(lines, line);) {
    per_parent[line.substr(line.find(": ") + 2)]++;
  }
  CHECK(per_parent.size() == 3);
  for (const auto& [parent, ranks] : per_parent)
    CHECK(ranks == 2);
}

TEST_CASE("every rank is told who it is, in grove's names and Open MPI's", "[run]") {
  // Scripts pick GPUs and files by these (mpirun's OMPI_COMM_WORLD_*);
  // what grove sets wins over what the user passed, as with mpirun.
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  auto run = run_on(dvm, {"-n", "5", "--map-by", "node", "--env", "GROVE_RANK=spoofed", "sh", "-c",
                          "echo $GROVE_RANK $GROVE_SIZE $GROVE_LOCAL_RANK $GROVE_LOCAL_SIZE "
                          "$GROVE_NODE_RANK $OMPI_COMM_WORLD_RANK $OMPI_COMM_WORLD_SIZE "
                          "$OMPI_COMM_WORLD_LOCAL_RANK $OMPI_COMM_WORLD_LOCAL_SIZE "
                          "$OMPI_COMM_WORLD_NODE_RANK $PMIX_RANK"});
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  std::set<std::string> lines;
  std::istringstream text(run.out);
  for (std::string line; std::getline(text, line);)
    lines.insert(line);
  // By node on 2 daemons: ranks 0, 2, 4 on the first (local 0, 1, 2 of 3),
  // 1 and 3 on the second (local 0, 1 of 2).
  const std::set<std::string> expected = {"0 5 0 3 0 0 5 0 3 0 0", "1 5 0 2 0 1 5 0 2 0 1",
                                          "2 5 1 3 1 2 5 1 3 1 2", "3 5 1 2 1 3 5 1 2 1 3",
                                          "4 5 2 3 2 4 5 2 3 2 4"};
  CHECK(lines == expected);
}

TEST_CASE("without a running DVM grove run starts one for the job and stops it", "[run]") {
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  auto result = run_program(
      {grove_binary(), "run", "-n", "3", "--daemons", "2", "--tag-output", "echo", "standalone"},
      options);
  CHECK(result.exit_code == 0);
  CHECK(count_occurrences(result.out, "<stdout>: standalone\n") == 3);
  CHECK_THAT(result.out, !Catch::Contains("DVM ready"));
  auto after = run_program({grove_binary(), "status"}, options);
  CHECK(after.exit_code != 0);
  CHECK_THAT(after.err, Catch::Contains("no running DVM"));
}

TEST_CASE("daemons raise their open-file limit; ranks get the one they were started with",
          "[run]") {
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  // Each rank prints its own soft limit and its daemon's (its parent).
  const std::string rank_script =
      "echo rank-limit $(ulimit -Sn); grep 'Max open files' /proc/$PPID/limits";
  auto result = run_program({"/bin/sh", "-c",
                             "ulimit -Sn 256 && exec \"$0\" run -n 2 --daemons 2 --map-by node "
                             "sh -c \"$1\"",
                             grove_binary(), rank_script},
                            options);
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(count_occurrences(result.out, "rank-limit 256\n") == 2);
  std::regex daemon_limit(R"(Max open files\s+(\d+)\s+(\d+))");
  int daemons = 0;
  for (auto it = std::sregex_iterator(result.out.begin(), result.out.end(), daemon_limit);
       it != std::sregex_iterator(); ++it, ++daemons) {
    CHECK((*it)[1] == (*it)[2]);  // soft raised to hard
  }
  CHECK(daemons == 2);
}

TEST_CASE("what a job's ranks leave behind, even in a session of its own, ends with the job",
          "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  // A process in a session of its own, and one whose parent left (a double
  // fork): neither in the rank's process group nor its tree any more.
  auto job = dvm.grove({"run", "-n", "2", "--map-by", "node", "sh", "-c",
                        "setsid sleep 301 & echo left $!; (sleep 302 & echo left $!); exit 0"});
  INFO(job.out << job.err);
  REQUIRE(job.exit_code == 0);
  std::vector<pid_t> left;
  for (auto at = job.out.find("left "); at != std::string::npos; at = job.out.find("left ", at + 1))
    left.push_back(std::stoi(job.out.substr(at + 5)));
  REQUIRE(left.size() == 4);
  for (pid_t pid : left) {
    INFO("pid " << pid);
    CHECK(wait_until([pid] { return ended(pid); }, std::chrono::seconds(30)));
  }
  for (pid_t pid : left)
    kill(pid, SIGKILL);  // whatever a failed check left
}

TEST_CASE("a job too large for its daemons' open-file limits is refused at once, naming the limit",
          "[run]") {
  TempDir tmpdir;
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  // 1500 descriptors: room for (1500 - 1024) / 4 = 119 ranks per daemon.
  auto result = run_program({"/bin/sh", "-c",
                             "ulimit -n 1500 && exec \"$0\" run -n 400 --daemons 2 --map-by node "
                             "true",
                             grove_binary()},
                            options);
  INFO(result.out << result.err);
  CHECK(result.exit_code != 0);
  CHECK_THAT(result.err, Catch::Contains("would put 200 on daemon 0"));
  CHECK_THAT(result.err,
             Catch::Contains("can host at most 119 ranks of a job (its open-file limit"));
  auto fits = run_program({"/bin/sh", "-c",
                           "ulimit -n 1500 && exec \"$0\" run -n 230 --daemons 2 --map-by node "
                           "true",
                           grove_binary()},
                          options);
  INFO(fits.out << fits.err);
  CHECK(fits.exit_code == 0);
}

namespace {
// Resident memory of a process in KiB (0 once it is gone).
long resident_kib(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}
}  // namespace

TEST_CASE("a reader that stops makes the ranks wait: no daemon buffers a job's output",
          "[run][backpressure]") {
  // Under AddressSanitizer freed memory sits in its quarantine (256 MB by
  // default) and would read as held; make it small for these daemons.
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    setenv("ASAN_OPTIONS", (std::string(asan) + ":quarantine_size_mb=4").c_str(), 1);
  }
  Dvm dvm(3);  // with jobs_output_window 0 the controller peaks at ~130 MB here
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  std::vector<int> pids;
  for (const auto& daemon : status["daemons"])
    pids.push_back(daemon["pid"].get<int>());
  std::vector<long> before;
  for (int pid : pids)
    before.push_back(resident_kib(pid));
  // 3 ranks, 40 MB of output each (41-byte lines); grove run's output goes
  // to a pipe nobody reads for 5 s, then everything is counted.
  constexpr long kBytes = 41 * 1'000'000;  // whole lines
  const std::string rank =
      "yes 0123456789012345678901234567890123456789 | head -c " + std::to_string(kBytes);
  const std::string pipeline = "\"$0\" run --dvm " + std::to_string(dvm.controller().pid()) +
                               " -n 3 --map-by node sh -c \"$1\" | (sleep 5; wc -c)";
  BackgroundProcess job({"/bin/sh", "-c", pipeline, grove_binary(), rank},
                        {"TMPDIR=" + dvm.tmpdir()});
  std::vector<long> peak(pids.size(), 0);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(4500);
  while (std::chrono::steady_clock::now() < until) {
    for (std::size_t i = 0; i < pids.size(); ++i)
      peak[i] = std::max(peak[i], resident_kib(pids[i]));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(job.wait_exit(std::chrono::seconds(120)) == 0);
  INFO(job.out() << job.err());
  // Nothing lost: every byte of every rank arrived once the reader read.
  CHECK_THAT(job.out(), Catch::Contains(std::to_string(3 * kBytes)));
  for (std::size_t i = 0; i < pids.size(); ++i) {
    INFO("daemon " << i << ": " << before[i] << " KiB before, peak " << peak[i] << " KiB");
    // A window (4 MiB) and socket buffers, not the 120 MB the job wrote.
    CHECK(peak[i] - before[i] < 40 * 1024);
  }
}

TEST_CASE("a job loses a daemon: it ends naming the daemon; the DVM runs the next", "[run]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  int victim = status["daemons"][2]["pid"].get<int>();
  RunResult result;
  std::thread job([&] { result = run_on(dvm, {"-n", "4", "--map-by", "node", "sleep", "20"}); });
  // The fault lands mid-job: once every rank runs (daemon 2's among them),
  // as the controller counts them.
  auto all_ranks_running = [&] {
    RunResult listed = dvm.grove({"ps", "--json"});
    if (listed.exit_code != 0) return false;
    for (const auto& entry : nlohmann::json::parse(listed.out))
      if (entry["state"] == "running" && entry["ranks_running"] == 4) return true;
    return false;
  };
  CHECK(wait_until(all_ranks_running, std::chrono::seconds(20)));
  kill(victim, SIGKILL);
  job.join();
  CHECK(result.exit_code != 0);
  CHECK_THAT(result.err, Catch::Contains("daemon 2"));
  CHECK_THAT(result.err, Catch::Contains("was lost"));
  auto next = run_on(dvm, {"-n", "3", "--map-by", "node", "--tag-output", "echo", "after"});
  CHECK(next.exit_code == 0);
  CHECK(count_occurrences(next.out, "<stdout>: after") == 3);
}

// A rank that fails to exec lingers a moment after reporting; the job kill
// reaches it there. It must die of the signal, not run the daemon's handler
// (which woke the daemon's loop as if it had been told to leave).
TEST_CASE("jobs whose program does not exist never take a daemon down", "[run]") {
  Dvm dvm(8);
  REQUIRE(dvm.ready());
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto result = run_on(dvm, {"-n", "16", "/nonexistent/grove-test-program"});
    CHECK(result.exit_code == 127);
    CHECK_THAT(result.err, Catch::Contains("cannot execute '/nonexistent/grove-test-program'"));
  }
  auto status = dvm.status();
  CHECK(status["failed"].empty());
  // mpirun's spelling of the rank count works too.
  auto next = run_on(dvm, {"-np", "8", "--map-by", "node", "true"});
  CHECK(next.exit_code == 0);
}

TEST_CASE("a finished job leaves no job directory on any daemon", "[run]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  const std::filesystem::path session = dvm.status()["session"].get<std::string>();
  // Daemons remove directories while this walks them: a walk that meets a
  // vanished one is taken again (a range-for's increment would throw).
  auto job_directories = [&] {
    for (int walk = 0;; ++walk) {
      REQUIRE(walk < 1000);
      REQUIRE(std::filesystem::is_directory(session));
      int found = 0;
      std::error_code error;
      std::filesystem::recursive_directory_iterator it(session, error), end;
      while (!error && it != end) {
        if (it->path().filename().string().rfind("job-", 0) == 0) ++found;
        it.increment(error);
      }
      if (!error) return found;
    }
  };
  for (int job = 0; job < 4; ++job) {
    auto result = run_on(dvm, {"-n", "3", "--map-by", "node", "sh", "-c", "true"});
    CHECK(result.exit_code == 0);
  }
  auto failed = run_on(dvm, {"-n", "3", "--map-by", "node", "sh", "-c", "exit 3"});
  CHECK(failed.exit_code == 3);
  // Cleanup reaches every daemon as a broadcast after the job's end: wait for
  // it (bounded), not for a fixed time.
  wait_until([&] { return job_directories() == 0; }, std::chrono::seconds(10));
  CHECK(job_directories() == 0);
}

// Nobody is left to end the ranks of a daemon killed with SIGKILL; they end
// with it (parent-death signal), not run on under ppid 1.
TEST_CASE("the ranks of a SIGKILLed daemon do not outlive it", "[run]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const std::string marker = "41.0625";                             // a sleep no other test runs
  const std::string needle = std::string("sleep") + '\0' + marker;  // as in /proc/PID/cmdline
  RunResult result;
  std::thread job([&] { result = run_on(dvm, {"-n", "2", "--map-by", "node", "sleep", marker}); });
  const bool started =
      wait_until([&] { return processes_started_as(needle) == 2; }, std::chrono::seconds(20));
  CHECK(started);
  kill(dvm.status()["daemons"][1]["pid"].get<int>(), SIGKILL);
  job.join();
  CHECK(result.exit_code != 0);
  CHECK(wait_until([&] { return processes_started_as(needle) == 0; }, std::chrono::seconds(20)));
}

TEST_CASE("grove run --mca: the DVM's parameters must agree; others reach the ranks as OMPI_MCA_",
          "[run]") {
  Dvm dvm(2, {"--mca", "rml_base_radix2", "3"});
  REQUIRE(dvm.ready());
  CHECK(run_on(dvm, {"--mca", "rml_base_radix2", "3", "-n", "1", "true"}).exit_code == 0);
  RunResult differs = run_on(dvm, {"--mca", "rml_base_radix2", "4", "-n", "1", "true"});
  CHECK(differs.exit_code == 1);
  CHECK_THAT(differs.err, Catch::Contains("rml_base_radix2 4 cannot apply to one job: this DVM "
                                          "runs with rml_base_radix2 3"));
  RunResult from_default =
      run_on(dvm, {"--mca", "grpcomm_low_radix_release", "off", "-n", "1", "true"});
  CHECK(from_default.exit_code == 1);
  CHECK_THAT(from_default.err, Catch::Contains("runs with grpcomm_low_radix_release true"));
  TempDir scratch("grove-params");
  const std::string file = scratch.write("params.conf", "rml_base_radix = 8\n");
  RunResult from_file = run_on(dvm, {"--param-file", file, "-n", "1", "true"});
  CHECK(from_file.exit_code == 1);
  CHECK_THAT(from_file.err, Catch::Contains("rml_base_radix 8 cannot apply"));
  RunResult typo = run_on(dvm, {"--mca", "rml_base_radx2", "4", "-n", "1", "true"});
  CHECK(typo.exit_code == 1);
  CHECK_THAT(typo.err, Catch::Contains("did you mean 'rml_base_radix2'"));

  RunResult foreign =
      run_on(dvm, {"--mca", "btl", "tcp,self", "-n", "2", "sh", "-c", "echo btl=$OMPI_MCA_btl"});
  CHECK(foreign.exit_code == 0);
  CHECK(foreign.out == "btl=tcp,self\nbtl=tcp,self\n");
}

TEST_CASE("without -n a job has one rank per slot; --nooversubscribe refuses more", "[run]") {
  // mpirun's habits: no -n fills the slots (the hosts' cores: local daemons
  // share their host's, counted once); --nooversubscribe refuses a job that
  // would put more ranks on a host than it has slots, before anything runs.
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const int cores = dvm.status()["daemons"][0]["cores"].get<int>();
  REQUIRE(cores >= 1);
  auto filled = run_on(dvm, {"sh", "-c", "echo rank $GROVE_RANK of $GROVE_SIZE"});
  INFO(filled.out << filled.err);
  REQUIRE(filled.exit_code == 0);
  CHECK(count_occurrences(filled.out, "rank ") == static_cast<std::size_t>(cores));
  CHECK_THAT(filled.out, Catch::Contains("of " + std::to_string(cores) + "\n"));
  CHECK_THAT(filled.err, !Catch::Contains("oversubscribed"));

  const std::string too_many = std::to_string(cores + 1);
  auto refused = run_on(dvm, {"-n", too_many, "--nooversubscribe", "echo", "ran"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.empty());
  CHECK_THAT(refused.err, Catch::Contains(too_many + " ranks are more than the " +
                                          std::to_string(cores) + " slots") &&
                              Catch::Contains("--nooversubscribe"));
  auto allowed = run_on(dvm, {"-n", too_many, "--oversubscribe", "echo", "ran"});
  CHECK(allowed.exit_code == 0);
  CHECK(count_occurrences(allowed.out, "ran") == static_cast<std::size_t>(cores + 1));
  auto both = run_on(dvm, {"-n", "1", "--oversubscribe", "--nooversubscribe", "true"});
  CHECK(both.exit_code == 125);
}
