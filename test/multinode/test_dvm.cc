// Real daemons on this host: start, collectives on both trees, accounting
// against the simulator, send paths, a killed daemon, hostile peers, stop.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "control/control_socket.h"
#include "dvm_harness.h"
#include "grpcomm/tags.h"
#include "sim/simulator.h"
#include "support/loopback.h"
#include "support/wait.h"

using namespace grove;
using namespace grove::test;

namespace {

bool process_gone(int pid) {
  return kill(pid, 0) != 0 && errno == ESRCH;
}

std::vector<int> daemon_pids(const nlohmann::json& status) {
  std::vector<int> pids;
  for (const auto& daemon : status["daemons"])
    pids.push_back(daemon["pid"].get<int>());
  return pids;
}

}  // namespace

TEST_CASE("eight daemons run barriers and releases on both trees", "[dvm]") {
  for (const char* low : {"true", "false"}) {
    INFO("grpcomm_low_radix_release " << low);
    Dvm dvm(8, {"--mca", "grpcomm_low_radix_release", low});
    REQUIRE(dvm.ready());
    auto status = dvm.status();
    REQUIRE(status["daemons"].size() == 8);
    for (const auto& daemon : status["daemons"])
      CHECK(daemon["state"] == "up");
    CHECK(status["answered"] == 8);
    CHECK(status["fence_topology"] == "tree");  // the default
    // The controller discovered the host once; the daemons it started here
    // imported its export, and see the same cores.
    CHECK(status["daemons"][0]["topology"] == "discovered");
    for (std::size_t vpid = 1; vpid < 8; ++vpid) {
      CHECK(status["daemons"][vpid]["topology"] == "imported");
      CHECK(status["daemons"][vpid]["cores"] == status["daemons"][0]["cores"]);
    }
    const std::string release_topology = std::string(low) == "true" ? "release" : "routing";

    for (const char* size : {"33", "10KB", "1M"}) {
      INFO("size " << size);
      auto before = dvm.status()["engine_total"];
      auto bench = dvm.bench("release", size, 2);
      CHECK(bench["spans_us"].size() == 2);
      auto after = dvm.status()["engine_total"];
      auto [frames_after, bytes_after] =
          sum_traffic(after, "xcast-data", "bench-release", release_topology);
      auto [frames_before, bytes_before] =
          sum_traffic(before, "xcast-data", "bench-release", release_topology);
      // Two releases, one data frame per daemon other than the controller each,
      // header plus the (incompressible) payload.
      const std::uint64_t payload = bench["wire_bytes"].get<std::uint64_t>();
      CHECK(frames_after - frames_before == 2 * 7);
      CHECK(bytes_after - bytes_before == 2 * 7 * (64 + payload));
    }

    auto barrier = dvm.bench("barrier", "0", 3);
    CHECK(barrier["spans_us"].size() == 3);
    // The fence traffic of those barriers equals the simulator's accounting
    // for the same N, radices and (empty) payload.
    SimOptions sim;
    sim.daemons = 8;
    sim.payload_bytes = 0;
    sim.radices = {64, 4};
    sim.low_radix_release = std::string(low) == "true";
    sim.rounds = 3;
    sim.signature = "bench-barrier";
    sim.network.jitter = 0;
    SimResult expected = run_simulation(sim);
    REQUIRE(expected.ok);
    auto total = dvm.status()["engine_total"];
    for (auto [type, tag] : {std::pair{FrameType::fence_rollup, tags::fence_rollup},
                             std::pair{FrameType::xcast_data, tags::fence_release},
                             std::pair{FrameType::xcast_ack, tags::fence_release}}) {
      INFO(frame_type_name(type) << " " << tag_name(tag));
      auto [frames, bytes] =
          sum_traffic(total, std::string(frame_type_name(type)), std::string(tag_name(tag)));
      TrafficCount simulated = expected.traffic.of(type, tag);
      CHECK(frames == simulated.frames);
      CHECK(bytes == simulated.bytes);
    }
  }
}

TEST_CASE("grove bench reports nearest-rank percentiles of the spans it timed", "[dvm]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  for (int count : {1, 3, 200}) {
    INFO("count " << count);
    auto bench = dvm.bench("barrier", "0", count);
    std::vector<double> spans = bench["spans_us"].get<std::vector<double>>();
    REQUIRE(spans.size() == static_cast<std::size_t>(count));
    std::sort(spans.begin(), spans.end());
    auto nearest_rank = [&](double q) {
      std::size_t rank = static_cast<std::size_t>(std::ceil(q * count));
      return spans[std::max<std::size_t>(rank, 1) - 1];
    };
    CHECK(bench["min_us"].get<double>() == spans.front());
    CHECK(bench["max_us"].get<double>() == spans.back());
    CHECK(bench["p50_us"].get<double>() == nearest_rank(0.50));
    CHECK(bench["p99_us"].get<double>() == nearest_rank(0.99));
    if (count == 200) CHECK(bench["p99_us"].get<double>() == spans[197]);  // 198th of 200
  }
  auto text = dvm.grove({"bench", "barrier", "--count", "5"});
  CHECK(text.exit_code == 0);
  CHECK(
      std::regex_search(text.out, std::regex(R"(min [\d.]+ us, median [\d.]+ us, mean [\d.]+ us, )"
                                             R"(p50 [\d.]+ us, p99 [\d.]+ us, max [\d.]+ us)")));
}

TEST_CASE("encrypted and unprotected frames carry releases and barriers alike", "[dvm][seal]") {
  for (const char* mode : {"encryption", "none"}) {
    INFO("rml_frame_protection " << mode);
    Dvm dvm(4, {"--mca", "rml_frame_protection", mode});
    REQUIRE(dvm.ready());
    auto bench = dvm.bench("release", "1M", 2);
    CHECK(bench["spans_us"].size() == 2);
    CHECK(dvm.bench("barrier", "0", 3)["spans_us"].size() == 3);
    // Counters count grove frames whatever the wire carries around them.
    auto [frames, bytes] =
        sum_traffic(dvm.status()["engine_total"], "xcast-data", "bench-release", "release");
    CHECK(frames == 2 * 3);
    CHECK(bytes == 2 * 3 * (64 + bench["wire_bytes"].get<std::uint64_t>()));
  }
}

TEST_CASE("with rml_base_verbose 2 every release-tree forward is sent direct", "[dvm]") {
  Dvm dvm(10, {"--mca", "rml_base_radix", "64", "--mca", "rml_base_radix2", "2", "--mca",
               "rml_base_verbose", "2"});
  REQUIRE(dvm.ready());
  dvm.bench("barrier", "0", 1);
  dvm.stop();
  const std::string& log = dvm.controller().err();
  std::regex send_line(
      R"((RML-SEND-[A-Z]+) to (\d+) tag ([a-z-]+) topology (\w+) bytes \d+ ([a-z-]+))");
  std::size_t release_forwards = 0, acks = 0, direct = 0, fence_sends = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), send_line);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[3] != std::string(tag_name(tags::fence_release))) continue;
    ++fence_sends;
    if ((*it)[4] != "release") continue;
    if ((*it)[5] == "xcast-data") ++release_forwards;
    if ((*it)[5] == "xcast-ack") ++acks;
    if ((*it)[1] == "RML-SEND-DIRECT") ++direct;
  }
  // A radix-2 tree of 10 has 9 edges: 9 forwards and 9 acknowledgements, every
  // one sent direct, and nothing of the fence release on the routing tree.
  CHECK(release_forwards == 9);
  CHECK(acks == 9);
  CHECK(direct == 18);
  CHECK(fence_sends == 18);
}

TEST_CASE("a SIGKILLed daemon is declared lost and barriers go on among survivors", "[dvm]") {
  Dvm dvm(6, {"--mca", "rml_base_radix2", "2"});
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  int victim_pid = status["daemons"][2]["pid"].get<int>();
  REQUIRE(kill(victim_pid, SIGKILL) == 0);
  REQUIRE(dvm.controller().wait_for("daemon 2", std::chrono::seconds(20)));
  CHECK_THAT(dvm.controller().err(), Catch::Contains("lost"));
  REQUIRE(
      wait_until([&] { return dvm.status()["epoch"].get<int>() == 1; }, std::chrono::seconds(10)));
  auto barrier = dvm.bench("barrier", "0", 3);
  CHECK(barrier["spans_us"].size() == 3);
  auto release = dvm.bench("release", "10KB", 2);
  CHECK(release["spans_us"].size() == 2);
  auto after = dvm.status();
  CHECK(after["failed"] == nlohmann::json::array({2}));
  CHECK(after["epoch"] == 1);
  CHECK(after["tree_version"] == 1);
  CHECK(after["daemons"][2]["state"] == "failed");
  CHECK(after["answered"] == 5);
  auto stopped = dvm.stop();
  CHECK_THAT(stopped.out, Catch::Contains("grove: DVM stopped (5 daemons; 1 had been lost)"));
}

TEST_CASE("garbage and a wrong secret on a daemon's port are refused", "[dvm]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  std::string endpoint = status["daemons"][3]["endpoint"];
  auto colon = endpoint.rfind(':');
  const auto port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(colon + 1)));
  auto connect_raw = [&]() {
    const int fd = connect_loopback(port);
    REQUIRE(fd >= 0);
    return fd;
  };
  {
    int fd = connect_raw();
    std::string garbage(200, 'G');
    REQUIRE(write(fd, garbage.data(), garbage.size()) == 200);
    char byte;
    // The daemon closes the connection: read ends with EOF or an error.
    CHECK(read(fd, &byte, 1) <= 0);
    close(fd);
  }
  {
    // A well-formed HELLO from a client that cannot know the secret: the
    // daemon's CHALLENGE is of no use to it, and its PROOF is refused.
    int fd = connect_raw();
    std::string hello = "GRH1";
    hello += std::string("\x01\x01\x00\x00", 4);
    hello += std::string("\x00\x00\x00\x05", 4);
    hello += std::string(32, 'n');
    REQUIRE(write(fd, hello.data(), hello.size()) == 44);
    char challenge[76];
    std::size_t got = 0;
    while (got < sizeof challenge) {
      ssize_t n = read(fd, challenge + got, sizeof challenge - got);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    CHECK(got == 76);
    std::string proof = "GRH1";
    proof += std::string("\x01\x03\x00\x00", 4);
    proof += std::string(32, 'x');
    REQUIRE(write(fd, proof.data(), proof.size()) == 40);
    char byte;
    CHECK(read(fd, &byte, 1) <= 0);
    close(fd);
  }
  CHECK(dvm.controller().wait_for("bad handshake magic", std::chrono::seconds(10)));
  CHECK(dvm.controller().wait_for("did not prove knowledge of this DVM's secret",
                                  std::chrono::seconds(10)));
  // The DVM keeps working, with the same four daemons.
  auto barrier = dvm.bench("barrier", "0", 2);
  CHECK(barrier["spans_us"].size() == 2);
  auto after = dvm.status();
  CHECK(after["failed"].empty());
  CHECK(after["answered"] == 4);
}

TEST_CASE("a flood of connections that never authenticate costs a few log lines, not one each",
          "[dvm]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  std::string endpoint = dvm.status()["daemons"][1]["endpoint"];
  const auto port = static_cast<std::uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  // 2000 connections, each closed before its handshake (before: one log
  // line each; 22,500 of them wrote 8.4 MB).
  for (int i = 0; i < 2000; ++i) {
    const int fd = connect_loopback(port);
    REQUIRE(fd >= 0);
    close(fd);
  }
  // Once the window is over the daemon says how many it left out.
  REQUIRE(dvm.controller().wait_for("were not logged in the last 10 s", std::chrono::seconds(40)));
  const std::size_t logged =
      count_occurrences(dvm.controller().err(), "closed by the peer during the handshake");
  INFO(logged << " lines");
  CHECK(logged >= 1);
  CHECK(logged <= 15);
  CHECK(dvm.status()["failed"].empty());
  CHECK(dvm.bench("barrier", "0", 2)["spans_us"].size() == 2);
}

TEST_CASE("grove stop leaves no process and no session directory", "[dvm]") {
  Dvm dvm(5);
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  std::string session = status["session"];
  REQUIRE(std::filesystem::exists(session));
  auto pids = daemon_pids(status);
  REQUIRE(pids.size() == 5);
  auto stopped = dvm.stop();
  CHECK(stopped.exit_code == 0);
  CHECK_THAT(stopped.out, Catch::Contains("stopped (5 daemons)"));  // the controller counts
  CHECK(dvm.controller().wait_exit(std::chrono::seconds(10)) == 0);
  for (int pid : pids) {
    INFO("pid " << pid);
    CHECK(wait_until([&] { return process_gone(pid); }, std::chrono::seconds(5)));
  }
  CHECK_FALSE(std::filesystem::exists(session));
}

TEST_CASE("a one-daemon DVM completes collectives and stops without waiting", "[dvm]") {
  // Alone, the controller completes every collective inside the call that
  // starts it; it must still learn the op finished. Before that held, the
  // benchmarks never returned and the stop sat out daemon_stop_timeout_ms,
  // which this test sets far beyond the CLI's own timeouts.
  Dvm dvm(1, {"--mca", "daemon_stop_timeout_ms", "600000"});
  REQUIRE(dvm.ready());
  auto release = dvm.bench("release", "33", 3);
  CHECK(release["ok"] == true);
  CHECK(release["spans_us"].size() == 3);
  auto barrier = dvm.bench("barrier", "0", 3);
  CHECK(barrier["spans_us"].size() == 3);
  auto stopped = dvm.stop();
  CHECK(stopped.exit_code == 0);
  CHECK_THAT(stopped.out, Catch::Contains("stopped (1 daemon)"));
  CHECK(dvm.controller().wait_exit(std::chrono::seconds(10)) == 0);
  CHECK_THAT(dvm.controller().err(), !Catch::Contains("not every daemon acknowledged"));
}

TEST_CASE("two DVMs on one host do not interfere; commands ask which one", "[dvm]") {
  TempDir shared;
  Dvm first(2, {}, {}, &shared);
  REQUIRE(first.ready());
  // A second start is refused, naming the one running, unless asked for.
  RunOptions options;
  options.extra_env = {shared.env()};
  auto refused = run_program({grove_binary(), "start", "--local", "2", "--daemonize"}, options);
  DaemonizedController not_refused(controller_pid_in(refused.out));  // if it wrongly started
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("a DVM is already running: controller pid " +
                                          std::to_string(first.controller().pid())));
  CHECK_THAT(refused.err, Catch::Contains("--another"));
  Dvm second(3, {"--another"}, {}, &shared);
  REQUIRE(second.ready());
  auto ambiguous = run_program({grove_binary(), "status"}, options);
  CHECK(ambiguous.exit_code != 0);
  CHECK_THAT(ambiguous.err, Catch::Contains("2 DVMs are running"));
  CHECK_THAT(ambiguous.err, Catch::Contains(std::to_string(first.controller().pid())));
  CHECK(first.status()["size"] == 2);
  CHECK(second.status()["size"] == 3);
  CHECK(first.bench("barrier", "0", 2)["spans_us"].size() == 2);
  CHECK(second.bench("release", "1KB", 2)["spans_us"].size() == 2);
}

TEST_CASE("daemons that never report end the start with an error naming them", "[dvm]") {
  TempDir tmpdir;
  std::string fake = tmpdir.path() + "/fake-groved";
  {
    std::FILE* script = std::fopen(fake.c_str(), "w");
    std::fputs("#!/bin/sh\nexec sleep 30\n", script);
    std::fclose(script);
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  }
  RunOptions options;
  options.extra_env = {tmpdir.env(), "GROVE_GROVED=" + fake};
  options.timeout = std::chrono::seconds(30);
  auto result = run_program(
      {grove_binary(), "start", "--local", "14", "--mca", "daemon_report_timeout_ms", "500"},
      options);
  CHECK(result.exit_code == 1);
  CHECK_THAT(result.err, Catch::Contains("never reported"));
  // The first ten by name, then a count: thousands never print thousands.
  CHECK_THAT(result.err, Catch::Contains("daemon 1, daemon 2, daemon 3"));
  CHECK_THAT(result.err, Catch::Contains("daemon 10, and 3 more"));
  CHECK_THAT(result.err, !Catch::Contains("daemon 11"));
  auto no_dvm = run_program({grove_binary(), "status"}, options);
  CHECK(no_dvm.exit_code != 0);
  CHECK_THAT(no_dvm.err, Catch::Contains("no running DVM"));
}

TEST_CASE("a hung daemon misses its heartbeats and is declared lost", "[dvm]") {
  Dvm dvm(4, {"--mca", "daemon_heartbeat_ms", "100", "--mca", "daemon_heartbeat_misses", "5"});
  REQUIRE(dvm.ready());
  int victim = dvm.status()["daemons"][1]["pid"].get<int>();
  REQUIRE(kill(victim, SIGSTOP) == 0);
  REQUIRE(dvm.controller().wait_for("missed 5 heartbeats", std::chrono::seconds(20)));
  // A daemon declared lost is really gone: the controller ended it.
  CHECK(wait_until([&] { return process_gone(victim); }, std::chrono::seconds(10)));
  auto after = dvm.status();
  CHECK(after["failed"] == nlohmann::json::array({1}));
  CHECK_THAT(after["daemons"][1]["failure"].get<std::string>(), Catch::Contains("heartbeats"));
  CHECK(dvm.bench("barrier", "0", 2)["spans_us"].size() == 2);
}

TEST_CASE("grove start --daemonize returns once ready and writes the URI", "[dvm]") {
  TempDir tmpdir;
  const std::string uri_file = tmpdir.path() + "/dvm.uri";
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  options.timeout = std::chrono::seconds(60);
  auto started = run_program(
      {grove_binary(), "start", "--local", "3", "--daemonize", "--report-uri", uri_file}, options);
  REQUIRE(started.exit_code == 0);
  DaemonizedController guard(controller_pid_in(started.out));
  CHECK_THAT(started.out, Catch::Contains("DVM ready: 3 daemons"));
  std::ifstream file(uri_file);
  std::string uri;
  file >> uri;
  REQUIRE(uri.rfind("unix:", 0) == 0);
  auto status = run_program({grove_binary(), "status", "--json", "--dvm", uri}, options);
  REQUIRE(status.exit_code == 0);
  auto json = nlohmann::json::parse(status.out);
  CHECK(json["size"] == 3);
  auto pids = daemon_pids(json);
  std::string session = json["session"];
  auto stopped = run_program({grove_binary(), "stop", "--dvm", uri}, options);
  CHECK(stopped.exit_code == 0);
  for (int pid : pids)
    CHECK(wait_until([&] { return process_gone(pid); }, std::chrono::seconds(10)));
  CHECK_FALSE(std::filesystem::exists(session));
}

TEST_CASE("Ctrl-C during grove start --daemonize leaves no DVM behind", "[dvm]") {
  // Daemons that never report (a stand-in groved that marks its start and
  // sleeps) hold the start in its wait; the mark says the wait has begun.
  TempDir tmpdir;
  const std::string fake = tmpdir.path() + "/groved";
  {
    std::ofstream script(fake);
    script << "#!/bin/sh\ntouch \"" << tmpdir.path() << "/started.$$\"\nexec sleep 600\n";
  }
  chmod(fake.c_str(), 0755);
  BackgroundProcess start({grove_binary(), "start", "--local", "3", "--daemonize"},
                          {tmpdir.env(), "GROVE_GROVED=" + fake});
  auto marks = [&] {
    std::vector<int> pids;
    for (const auto& entry : std::filesystem::directory_iterator(tmpdir.path())) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("started.", 0) == 0) pids.push_back(std::stoi(name.substr(8)));
    }
    return pids;
  };
  REQUIRE(wait_until([&] { return marks().size() == 2; }, std::chrono::seconds(30)));
  std::vector<int> controllers;
  for (const auto& entry :
       std::filesystem::directory_iterator(tmpdir.path() + "/grove-" + std::to_string(getuid()))) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("dvm-", 0) == 0)
      controllers.push_back(std::stoi(name.substr(4)));
  }
  REQUIRE(controllers.size() == 1);

  REQUIRE(kill(start.pid(), SIGINT) == 0);
  CHECK(start.wait_exit(std::chrono::seconds(30)) == 130);
  CHECK_THAT(start.err(), Catch::Contains("interrupted: the DVM being started was stopped"));
  CHECK(wait_until([&] { return process_gone(controllers[0]); }, std::chrono::seconds(10)));
  for (int pid : marks())
    CHECK(wait_until([&] { return process_gone(pid); }, std::chrono::seconds(10)));
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  auto status = run_program({grove_binary(), "status"}, options);
  CHECK(status.exit_code != 0);
  CHECK_THAT(status.err, Catch::Contains("no running DVM"));
}

TEST_CASE("Ctrl-C in the terminal of a foreground grove start stops the DVM without an error",
          "[dvm]") {
  // A terminal sends SIGINT to the whole foreground process group: the
  // controller and the local daemons it started. The daemons leave it to
  // the controller's orderly stop; each used to die at once, and the
  // controller logged their connections reset.
  TempDir tmpdir;
  BackgroundProcess start({grove_binary(), "start", "--local", "4"}, {tmpdir.env()});
  REQUIRE(start.wait_for("DVM ready", std::chrono::seconds(60)));
  REQUIRE(kill(-start.pid(), SIGINT) == 0);  // the group, as the terminal does
  CHECK(start.wait_exit(std::chrono::seconds(30)) == 0);
  CHECK_THAT(start.err(), !Catch::Contains("error"));
  CHECK_THAT(start.err(), !Catch::Contains("reset"));
  RunOptions options;
  options.extra_env = {tmpdir.env()};
  CHECK(run_program({grove_binary(), "status"}, options).exit_code != 0);  // none left
}

TEST_CASE("grpcomm_enable_timing prints the census of every broadcast", "[dvm]") {
  Dvm dvm(3, {"--mca", "grpcomm_enable_timing", "true"});
  REQUIRE(dvm.ready());
  dvm.bench("release", "10KB", 2);
  dvm.bench("release", "33", 1);
  std::regex census(
      R"(grpcomm: timing bench-release (\w+) op (\d+): (\d+) bytes on the wire, started \d+ ns, completed \d+ ns, span [\d.]+ us)");
  std::vector<std::string> sizes;
  const std::string& log = dvm.controller().err();
  for (auto it = std::sregex_iterator(log.begin(), log.end(), census); it != std::sregex_iterator();
       ++it) {
    CHECK((*it)[1] == "release");
    sizes.push_back((*it)[3]);
  }
  // Each release is recorded with its own size: never averaged together.
  CHECK(sizes == std::vector<std::string>{"10000", "10000", "33"});
}

// The control socket is a protocol: requests of the wrong shape get a named
// error reply, and the controller carries on (these once killed it).
TEST_CASE("malformed control requests are refused and the controller carries on", "[dvm]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  const std::string socket = dvm.status()["session"].get<std::string>() + "/control.sock";
  auto ask = [&](const std::string& text) {
    auto reply =
        grove::control_request(socket, nlohmann::json::parse(text), std::chrono::seconds(10));
    REQUIRE(reply.ok());
    return *reply;
  };
  const std::pair<std::string, std::string> cases[] = {
      {R"({"cmd":1})", "'cmd' must be a string"},
      {R"({"cmd":"kill","job":"1"})", "'job' must be an integer"},
      {R"({"cmd":"bench","kind":"barrier","count":"5"})", "'count' must be an integer"},
      {R"({"cmd":"run","argv":["true"],"np":-1})", "'np' must be an integer"},
      {R"({"cmd":"run","argv":["true"],"np":4294967295})", "'np' must be an integer"},
  };
  for (const auto& [request, expected] : cases) {
    auto reply = ask(request);
    INFO(request);
    CHECK(reply["ok"] == false);
    CHECK_THAT(reply["error"].get<std::string>(), Catch::Contains(expected));
  }
  CHECK(dvm.controller().running());
  CHECK(dvm.status()["failed"].empty());
}

TEST_CASE("an idle control connection is closed by the controller", "[dvm]") {
  Dvm dvm(1);
  REQUIRE(dvm.ready());
  const std::string path = dvm.status()["session"].get<std::string>() + "/control.sock";
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  // Say nothing: within the request timeout (10 s) the controller hangs up.
  pollfd wait{fd, POLLIN, 0};
  REQUIRE(poll(&wait, 1, 20'000) == 1);
  char byte;
  CHECK(read(fd, &byte, 1) == 0);
  close(fd);
  CHECK(dvm.status()["ok"] == true);
}

TEST_CASE("grove start removes what a dead controller left behind", "[dvm]") {
  TempDir tmpdir;
  // A controller that is gone: a process that has exited, and its directory
  // with a socket and a job's files, as a crash leaves them.
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  REQUIRE(gone > 0);
  waitpid(gone, nullptr, 0);
  const std::filesystem::path base = tmpdir.path() + "/grove-" + std::to_string(getuid());
  const std::filesystem::path litter = base / ("dvm-" + std::to_string(gone));
  std::filesystem::create_directories(litter / "daemon-0" / "job-7");
  std::filesystem::permissions(base, std::filesystem::perms::owner_all);
  std::ofstream(litter / "control.sock") << "";
  Dvm dvm(1, {}, {}, &tmpdir);
  REQUIRE(dvm.ready());
  CHECK_FALSE(std::filesystem::exists(litter));
  CHECK(dvm.status()["ok"] == true);
}

namespace {

// Exited, whether or not its parent has reaped it yet (a stopped parent cannot).
bool process_ended(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  return close == std::string::npos || text.compare(close + 2, 1, "Z") == 0;
}

}  // namespace

TEST_CASE("a controller that stalls past the heartbeat window condemns no daemon", "[dvm]") {
  // A 1 s window; the controller is stopped for 3 s, three windows.
  Dvm dvm(4, {"--mca", "daemon_heartbeat_ms", "100", "--mca", "daemon_heartbeat_misses", "10",
              "--mca", "daemon_base_verbose", "1"});
  REQUIRE(dvm.ready());
  const int controller = dvm.status()["pid"].get<int>();
  REQUIRE(kill(controller, SIGSTOP) == 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the stall itself, not a wait for a race
  REQUIRE(kill(controller, SIGCONT) == 0);
  auto after = dvm.status();
  CHECK(after["failed"].empty());
  CHECK(after["answered"] == 4);
  CHECK_THAT(dvm.controller().err(), Catch::Contains("the controller's loop stalled"));
  CHECK_THAT(dvm.controller().err(), !Catch::Contains("missed 10 heartbeats"));
  CHECK(dvm.bench("barrier", "0", 2)["spans_us"].size() == 2);
}

TEST_CASE("daemons leave, with their ranks, a controller that stops answering", "[dvm]") {
  Dvm dvm(3,
          {"--mca", "daemon_heartbeat_ms", "100", "--mca", "daemon_controller_timeout_ms", "1000"});
  REQUIRE(dvm.ready());
  auto status = dvm.status();
  const int controller = status["pid"].get<int>();
  const std::vector<int> pids = daemon_pids(status);
  REQUIRE(kill(controller, SIGSTOP) == 0);
  const bool left = wait_until([&] { return process_ended(pids[1]) && process_ended(pids[2]); },
                               std::chrono::seconds(20));
  REQUIRE(kill(controller, SIGCONT) == 0);
  CHECK(left);
  CHECK_THAT(dvm.controller().err(), Catch::Contains("the controller has not answered"));
  // Back from its stall, the controller finds them gone and says so.
  CHECK(wait_until([&] { return dvm.status()["failed"].size() == 2; }, std::chrono::seconds(10)));
}
