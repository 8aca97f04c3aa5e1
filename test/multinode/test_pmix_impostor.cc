// Another local user must not act as a rank. The impostor knows everything a
// rank's environment holds (the nspace, the server's URI), runs as nobody and
// claims uid 0 through an LD_PRELOAD shim, which gets it past libpmix's own
// check; it then calls PMIx_Abort on the job. The daemon must refuse it, and
// the job must finish as if nothing happened. With pmix_verify_clients off the
// same impostor ends the job: the attack is real, the gate is what stops it.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dvm_harness.h"

using namespace grove::test;

namespace {

std::vector<std::string> pmix_env_of(const std::string& file) {
  std::ifstream in(file);
  std::vector<std::string> env;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("PMIX_", 0) == 0) env.push_back(line);
  }
  return env;
}

}  // namespace

TEST_CASE("another user cannot act as a rank: only processes the daemon started connect as ranks",
          "[pmix]") {
  if (geteuid() != 0) {
    WARN("skipped: running a process as another user needs root");
    return;
  }
  TempDir files("grove-impostor");
  chmod(files.path().c_str(), 0755);
  const std::string client =
      copy_for_everyone(binary_from_env("GROVE_PMIX_FENCE_CLIENT"), files.path());
  const std::string shim = copy_for_everyone(binary_from_env("GROVE_FAKE_ROOT_UID"), files.path());

  for (const char* verify : {"true", "false"}) {
    INFO("pmix_verify_clients " << verify);
    const std::string dir = files.path() + "/" + verify;
    std::filesystem::create_directory(dir);
    Dvm dvm(1, {"--mca", "pmix_verify_clients", verify});
    REQUIRE(dvm.ready());
    // Rank 1 reaches the fence a second after rank 0: libpmix then completes
    // the fence only if it still counts both ranks as local (a refused
    // connection that libpmix later sees closed made it count one fewer, and
    // the ranks' fence split in two and hung).
    const std::string script = "env > " + dir + "/env.$PMIX_RANK; exec " + client +
                               " --late 1:1 --wait-for " + dir + "/go 1";
    BackgroundProcess job({grove_binary(), "run", "--dvm", std::to_string(dvm.controller().pid()),
                           "-n", "2", "sh", "-c", script},
                          {"TMPDIR=" + dvm.tmpdir()});
    REQUIRE(job.wait_for("rank 0: connected", std::chrono::seconds(60)));
    REQUIRE(job.wait_for("rank 1: connected", std::chrono::seconds(60)));

    RunOptions impostor;
    impostor.extra_env = pmix_env_of(dir + "/env.0");
    REQUIRE(impostor.extra_env.size() > 3);
    impostor.extra_env.push_back("LD_PRELOAD=" + shim);
    // Under the sanitizer build the client carries ASan, which insists on
    // coming first among preloaded libraries; the shim must come first here.
    impostor.extra_env.push_back("ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0");
    impostor.timeout = std::chrono::seconds(15);
    RunResult attack = run_program({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                    "--clear-groups", client, "--abort", "7"},
                                   impostor);
    INFO("impostor: " << attack.out << attack.err);
    if (std::string(verify) == "true") {
      // Cut off mid-PMIx_Init, libpmix's client sometimes fails at once and
      // sometimes waits for ever; either way the attacker's own process is
      // the one left stuck (ended here by PID), and nothing reached the job.
      CHECK((attack.timed_out || attack.exit_code == 3));
    } else {
      CHECK_FALSE(attack.timed_out);
      CHECK(attack.exit_code == 3);  // PMIx_Abort returned (the job is ending)
    }

    std::ofstream(dir + "/go").put('\n');
    const int status = job.wait_exit(std::chrono::seconds(60));
    INFO("job: " << job.out() << job.err());
    INFO("controller: " << dvm.controller().err());
    if (std::string(verify) == "true") {
      CHECK(status == 0);
      CHECK(count_occurrences(job.out(), " rounds ok") == 2);
      // Refused by whichever sees it first: the handshake watchdog (another
      // user's connection, cut at once) or the client gate once libpmix has
      // read the handshake (pmix/handshake_watchdog.h, pmix/client_gate.h).
      CHECK_THAT(dvm.controller().err(),
                 Catch::Contains("refused a PMIx connection claiming to be rank 0") ||
                     (Catch::Contains("(uid 65534) that held the server in its handshake for") &&
                      Catch::Contains("another user's connection")));
      // The DVM goes on serving jobs.
      auto next = dvm.grove({"run", "-n", "2", client, "1"});
      CHECK(next.exit_code == 0);
    } else {
      CHECK(status == 7);
      CHECK_THAT(job.err(), Catch::Contains("rank 0 called PMIx_Abort with status 7"));
    }
  }
}
