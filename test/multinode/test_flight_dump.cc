// Flight recordings of real daemons (docs/simulator.md, "Flight recordings"):
// `grove status --dump DIR` writes every daemon's engine inputs, and
// `grove sim --replay DIR` runs them through fresh engines: no divergence,
// and each engine ends with the counts its daemon reported in that status.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "dvm_harness.h"
#include "support/wait.h"

using namespace grove::test;

namespace {

struct Replay {
  int exit_code = -1;
  nlohmann::json report;
  std::string err;
};

Replay replay(const std::string& dir) {
  RunOptions options;
  options.timeout = std::chrono::seconds(120);
  auto run = run_program({grove_binary(), "sim", "--replay", dir, "--json"}, options);
  Replay out{run.exit_code, nlohmann::json(), run.err};
  if (!run.out.empty()) out.report = nlohmann::json::parse(run.out);
  return out;
}

// `grove status --dump DIR --json`: the status, and the dump's summary in it.
nlohmann::json dump(Dvm& dvm, const std::string& dir) {
  auto status = dvm.grove({"status", "--dump", dir, "--json"}, std::chrono::seconds(120));
  REQUIRE(status.exit_code == 0);
  return nlohmann::json::parse(status.out);
}

// Each replayed engine sent what its daemon's engine counted in the status
// taken with the recording.
void check_counts(const nlohmann::json& status, const nlohmann::json& report) {
  std::map<int, nlohmann::json> counted;
  for (const auto& entry : status["counters"])
    counted[entry["vpid"].get<int>()] = entry;
  REQUIRE(report["daemons"].size() == counted.size());
  for (const auto& daemon : report["daemons"]) {
    const int vpid = daemon["vpid"].get<int>();
    INFO("vpid " << vpid);
    REQUIRE(counted.count(vpid) == 1);
    CHECK(daemon["accounting_matches"].get<bool>());
    CHECK(daemon["frames"] == counted[vpid]["engine_frames"]);
    CHECK(daemon["bytes"] == counted[vpid]["engine_bytes"]);
    CHECK(daemon["inputs"].get<std::uint64_t>() > 0);
  }
}

// The DVM's automatic flight dumps once the first has finished gathering.
nlohmann::json finished_dumps(Dvm& dvm) {
  nlohmann::json dumps;
  const bool finished = wait_until(
      [&] {
        dumps = dvm.status()["flight_dumps"]["dumps"];
        return !dumps.empty() && dumps[0]["state"] != "gathering";
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  REQUIRE(finished);
  return dumps;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("a PMIx fence job's flight recordings replay exactly, with the daemons' counts",
          "[pmix][flight]") {
  constexpr int kDaemons = 4;
  Dvm dvm(kDaemons, {"--mca", "rml_base_radix2", "2"});
  REQUIRE(dvm.ready());
  auto run =
      dvm.grove({"run", "-n", "8", "--map-by", "node", binary_from_env("GROVE_PMIX_FENCE_CLIENT"),
                 "--rounds", "6", "--max-bytes", "300"});
  REQUIRE(run.exit_code == 0);
  TempDir dir("grove-flight");
  const std::string where = dir.path() + "/dump";
  const nlohmann::json status = dump(dvm, where);
  REQUIRE(status["flight_dump"]["files"] == kDaemons);
  for (int vpid = 0; vpid < kDaemons; ++vpid)
    CHECK(std::filesystem::exists(where + "/daemon-" + std::to_string(vpid) + ".flight"));
  const Replay replayed = replay(where);
  INFO(replayed.err);
  REQUIRE(replayed.exit_code == 0);
  CHECK(replayed.report["ok"].get<bool>());
  CHECK(replayed.report["problems"].empty());
  CHECK(replayed.report["frames_checked"].get<std::uint64_t>() > 0);
  // The status's own broadcast reached each daemon after the controller's
  // recording was taken: one frame each, and nothing else unmatched.
  CHECK(replayed.report["received_after_recording"] == kDaemons - 1);
  check_counts(status, replayed.report);

  // The real history perturbed: kept to the middle, then jitter and a
  // daemon's death drawn from each of 20 seeds; nothing breaks.
  RunOptions options;
  options.timeout = std::chrono::seconds(300);
  auto perturbed = run_program({grove_binary(), "sim", "--replay", where, "--perturb", "1",
                                "--runs", "20", "--faults", "1", "--jitter", "10", "--json"},
                               options);
  INFO(perturbed.out << perturbed.err);
  REQUIRE(perturbed.exit_code == 0);
  const nlohmann::json runs = nlohmann::json::parse(perturbed.out);
  CHECK(runs["ok"].get<bool>());
  REQUIRE(runs["runs"].size() == 20);
  for (const auto& run : runs["runs"]) {
    CHECK(run["problems"].empty());
    CHECK(run["killed"].size() == 1);
    CHECK(run["kept"].size() == kDaemons);
  }

  // A corrupted recording is refused whole, naming its file.
  const std::string one = where + "/daemon-2.flight";
  std::fstream file(one, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(static_cast<std::streamoff>(std::filesystem::file_size(one) / 2));
  file.put('\x5a');
  file.close();
  const Replay refused = replay(where);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("daemon-2.flight"));
  CHECK_THAT(refused.err, Catch::Contains("checksum"));
}

TEST_CASE("a DVM that keeps no recording says so to grove status --dump", "[pmix][flight]") {
  Dvm dvm(2, {"--mca", "grpcomm_flight_recorder_size", "0"});
  REQUIRE(dvm.ready());
  TempDir dir("grove-flight");
  auto status = dvm.grove({"status", "--dump", dir.path() + "/none"});
  CHECK(status.exit_code == 1);
  CHECK_THAT(status.err, Catch::Contains("grpcomm_flight_recorder_size 0"));
  CHECK_FALSE(std::filesystem::exists(dir.path() + "/none"));
  // Nor does grove stop --dump stop it: the recordings it asked for are not there.
  auto stop = dvm.grove({"stop", "--dump", dir.path() + "/none"});
  CHECK(stop.exit_code == 1);
  CHECK_THAT(stop.err, Catch::Contains("the DVM was not stopped"));
  CHECK(dvm.status()["size"] == 2);
}

TEST_CASE("a relay killed mid-release: the survivors' recordings replay exactly",
          "[dvm][faults][flight]") {
  constexpr int kDaemons = 10;
  constexpr int kVictim = 3;  // a relay of the radix-2 release tree
  Dvm dvm(kDaemons,
          {"--mca", "rml_base_radix2", "2", "--mca", "grpcomm_release_delay_ms", "60000", "--mca",
           "grpcomm_release_delay_target", std::to_string(kVictim), "--mca", "debug_fault",
           std::to_string(kVictim) + ":release-delivered:1", "--mca", "daemon_heartbeat_ms", "0"});
  REQUIRE(dvm.ready());
  CHECK(dvm.bench("release", "10KB", 1)["spans_us"].size() == 1);
  CHECK(dvm.bench("barrier", "0", 3)["spans_us"].size() == 3);
  TempDir dir("grove-flight");
  const nlohmann::json status = dump(dvm, dir.path());
  CHECK(status["failed"] == nlohmann::json::array({kVictim}));
  // The victim's recording died with it; every survivor's is there.
  REQUIRE(status["flight_dump"]["files"] == kDaemons - 1);
  const Replay replayed = replay(dir.path());
  INFO(replayed.err);
  REQUIRE(replayed.exit_code == 0);
  CHECK(replayed.report["ok"].get<bool>());
  CHECK(replayed.report["problems"].empty());
  // Each survivor's barrier contribution went out ahead of its ack of the
  // round's broadcast (the delivery's hook contributed): matched in the
  // order sent. Only the status's own broadcast, sent after the
  // controller's recording, has no sender to match.
  CHECK(replayed.report["received_after_recording"] == kDaemons - 2);
  check_counts(status, replayed.report);
  // Perturbed from before the death (the victim, with no recording, dies
  // at the cut; its departure comes as recorded): nothing breaks.
  RunOptions options;
  options.timeout = std::chrono::seconds(300);
  auto perturbed = run_program({grove_binary(), "sim", "--replay", dir.path(), "--perturb", "1",
                                "--runs", "10", "--cut", "0.3", "--faults", "1"},
                               options);
  INFO(perturbed.out << perturbed.err);
  CHECK(perturbed.exit_code == 0);
  CHECK_THAT(perturbed.out,
             Catch::Contains("10 perturbations (seeds 1 to 10): every invariant held"));

  // grove stop --dump: the recordings, then the stop.
  TempDir last("grove-flight");
  auto stopped = dvm.grove({"stop", "--dump", last.path()}, std::chrono::seconds(120));
  REQUIRE(stopped.exit_code == 0);
  CHECK_THAT(stopped.err, Catch::Contains("flight recordings of 9 daemons written"));
  CHECK_THAT(stopped.out, Catch::Contains("DVM stopped"));
  const Replay at_stop = replay(last.path());
  INFO(at_stop.err);
  CHECK(at_stop.exit_code == 0);
}

TEST_CASE("a fence past its PMIX_TIMEOUT on a daemon makes the DVM dump every recording by itself",
          "[pmix][flight]") {
  constexpr int kDaemons = 3;
  TempDir dir("grove-flight");
  Dvm dvm(kDaemons, {"--mca", "grpcomm_flight_dump_dir", dir.path()});
  REQUIRE(dvm.ready());
  // Rank 0 (on the controller) reaches the fence only after 600 s; rank 1
  // (on daemon 1) gives up after 2 s: daemon 1 sees the timeout.
  auto job =
      dvm.grove({"run", "-n", "2", "--map-by", "node", binary_from_env("GROVE_PMIX_FENCE_CLIENT"),
                 "1", "--fence-timeout", "2", "--late", "0:600"},
                std::chrono::seconds(120));
  CHECK_FALSE(job.timed_out);
  CHECK_THAT(job.err, Catch::Contains("rank 1 round 0: PMIx_Fence: TIMEOUT"));
  const nlohmann::json dumps = finished_dumps(dvm);
  INFO(dumps.dump(2) << dvm.controller().err());
  REQUIRE(dumps.size() == 1);
  const nlohmann::json& made = dumps[0];
  CHECK(made["state"] == "written");
  CHECK(made["files"] == kDaemons);
  const std::string where = made["dir"].get<std::string>();
  CHECK(where == dir.path() + "/dump-1");
  REQUIRE(made["problems"].size() == 1);
  const std::string problem = made["problems"][0].get<std::string>();
  CHECK_THAT(problem, Catch::StartsWith("daemon 1: fence pmix:"));
  CHECK_THAT(problem, Catch::Contains("timed out (PMIX_TIMEOUT)"));
  CHECK(read_text(where + "/problems.txt") == problem + "\n");
  CHECK_THAT(dvm.controller().err(),
             Catch::Contains("every daemon's flight recording goes to " + where));
  const Replay replayed = replay(where);
  INFO(replayed.err);
  CHECK(replayed.exit_code == 0);
  CHECK(replayed.report["ok"].get<bool>());
  CHECK(replayed.report["daemons"].size() == kDaemons);
}

TEST_CASE("a broadcast held past grpcomm_flight_dump_stall_ms makes the DVM dump by itself",
          "[dvm][flight]") {
  constexpr int kDaemons = 4;
  TempDir dir("grove-flight");
  // Daemon 1 holds every release 4 s: the controller's broadcast is open
  // that long, past the 300 ms the stall watch allows.
  Dvm dvm(kDaemons,
          {"--mca", "rml_base_radix2", "2", "--mca", "grpcomm_release_delay_ms", "4000", "--mca",
           "grpcomm_release_delay_target", "1", "--mca", "grpcomm_flight_dump_stall_ms", "300",
           "--mca", "grpcomm_flight_dump_dir", dir.path()});
  REQUIRE(dvm.ready());
  CHECK(dvm.bench("release", "1KB", 1)["spans_us"].size() == 1);
  const nlohmann::json dumps = finished_dumps(dvm);
  INFO(dumps.dump(2) << dvm.controller().err());
  REQUIRE(dumps.size() == 1);
  CHECK(dumps[0]["state"] == "written");
  CHECK(dumps[0]["files"] == kDaemons);
  REQUIRE(dumps[0]["problems"].size() == 1);
  CHECK_THAT(dumps[0]["problems"][0].get<std::string>(),
             Catch::StartsWith("daemon 0: broadcast bench-release (op 1 on the release tree) "
                               "not complete after"));
  const Replay replayed = replay(dumps[0]["dir"].get<std::string>());
  INFO(replayed.err);
  CHECK(replayed.exit_code == 0);
  CHECK(replayed.report["ok"].get<bool>());
  // A DVM whose broadcasts complete makes none.
  Dvm quiet(2, {"--mca", "grpcomm_flight_dump_stall_ms", "300"});
  REQUIRE(quiet.ready());
  CHECK(quiet.bench("release", "1KB", 20)["spans_us"].size() == 20);
  CHECK(quiet.status()["flight_dumps"]["dumps"].empty());
}

TEST_CASE("a daemon that dies of a fatal signal writes its recording first",
          "[dvm][faults][flight]") {
  constexpr int kDaemons = 4;
  constexpr int kVictim = 2;
  TempDir dir("grove-flight");
  // Daemon 2 crashes (SIGSEGV) as it delivers the first release.
  Dvm dvm(kDaemons, {"--mca", "grpcomm_flight_dump_dir", dir.path(), "--mca", "debug_fault",
                     std::to_string(kVictim) + ":release-delivered:1:segv"});
  REQUIRE(dvm.ready());
  CHECK(dvm.bench("release", "1KB", 1)["spans_us"].size() == 1);
  REQUIRE(wait_until([&] { return dvm.status()["failed"] == nlohmann::json::array({kVictim}); },
                     std::chrono::seconds(60), std::chrono::milliseconds(100)));
  // What the dying daemon wrote on its stderr (the controller's) before it died.
  REQUIRE(wait_until(
      [&] {
        const std::string err = dvm.controller().err();
        return err.find("AddressSanitizer:DEADLYSIGNAL") != std::string::npos ||
               err.find("groved vpid 2: a fatal signal") != std::string::npos;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(50)));
  std::vector<std::string> crashes;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    crashes.push_back(entry.path().filename().string());
  if (dvm.controller().err().find("AddressSanitizer:DEADLYSIGNAL") != std::string::npos) {
    // A daemon built with AddressSanitizer reports the fault itself: no
    // handler of grove's is armed there (daemon/fatal_signal_dump.h).
    CHECK(crashes.empty());
  } else {
    INFO(dvm.controller().err());
    REQUIRE(crashes.size() == 1);
    CHECK_THAT(crashes[0], Catch::StartsWith("crash-daemon-2-"));
    const std::string where = dir.path() + "/" + crashes[0];
    CHECK_THAT(dvm.controller().err(), Catch::Contains("groved vpid 2: a fatal signal: flight "
                                                       "recording written to " +
                                                       where + "/daemon-2.flight"));
    const Replay replayed = replay(where);
    INFO(replayed.err);
    CHECK(replayed.exit_code == 0);
    REQUIRE(replayed.report["daemons"].size() == 1);
    CHECK_FALSE(replayed.report["daemons"][0]["counts_known"].get<bool>());
    // It went as far as delivering the release it died at.
    CHECK(replayed.report["daemons"][0]["inputs"].get<std::uint64_t>() > 0);
  }
  // The DVM goes on without it.
  CHECK(dvm.bench("release", "1KB", 2)["spans_us"].size() == 2);
}
