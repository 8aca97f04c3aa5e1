#include "launcher/sim_replay.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "daemon/flight_dump.h"
#include "daemon/versions.h"
#include "launcher/cli_context.h"
#include "sim/flight_perturb.h"
#include "sim/flight_replay.h"

namespace grove {
namespace {

nlohmann::json replay_json(const ReplayReport& report) {
  nlohmann::json daemons = nlohmann::json::array();
  for (const DaemonReplay& daemon : report.daemons) {
    daemons.push_back({{"vpid", daemon.self},
                       {"build", daemon.build},
                       {"inputs", daemon.inputs},
                       {"fresh", daemon.fresh},
                       {"frames", daemon.accounting.total().frames},
                       {"bytes", daemon.accounting.total().bytes},
                       {"accounting_matches", daemon.accounting_matches},
                       {"counts_known", daemon.counts_known}});
  }
  nlohmann::json out = {{"ok", report.ok()},
                        {"daemons", daemons},
                        {"frames_checked", report.frames_checked},
                        {"sent_not_received", report.sent_not_received},
                        {"received_after_recording", report.received_after_recording},
                        {"problems", report.problems}};
  if (report.divergence) {
    out["divergence"] = {{"vpid", report.divergence->daemon},
                         {"input", report.divergence->input},
                         {"what", report.divergence->what},
                         {"recorded", report.divergence->recorded},
                         {"replayed", report.divergence->replayed}};
  }
  return out;
}

}  // namespace

int run_sim_replay(const std::string& dir, bool json) {
  auto recordings = read_flight_dump(dir);
  if (!recordings) {
    print_cli_error(recordings.error().message);
    return 2;
  }
  auto report = replay_flights(*recordings);
  if (!report) {
    print_cli_error(report.error().message);
    return 2;
  }
  if (json) {
    std::cout << replay_json(*report).dump(2) << "\n";
  } else {
    for (const std::string& line : describe_replay(*report, build_revision()))
      std::printf("%s\n", line.c_str());
  }
  return report->ok() ? 0 : 1;
}

int run_sim_perturb(const std::string& dir, const PerturbCli& cli, bool json) {
  auto recordings = read_flight_dump(dir);
  if (!recordings) {
    print_cli_error(recordings.error().message);
    return 2;
  }
  PerturbOptions options;
  options.cut = cli.cut;
  options.kills = cli.kills;
  options.base_latency_ns = static_cast<TimeNs>(cli.alpha_us * 1000.0);
  options.jitter_ns = static_cast<TimeNs>(cli.jitter * cli.alpha_us * 1000.0);
  nlohmann::json runs = nlohmann::json::array();
  std::optional<std::uint64_t> failed;
  for (std::uint32_t run = 0; run < cli.runs && !failed; ++run) {
    options.seed = cli.seed + run;
    auto report = perturb_flights(*recordings, options);
    if (!report) {
      print_cli_error(report.error().message);
      return 2;
    }
    if (!report->ok()) failed = options.seed;
    if (json) {
      std::map<std::string, std::uint64_t> kept;
      for (const auto& [vpid, inputs] : report->kept)
        kept[std::to_string(vpid)] = inputs;
      runs.push_back({{"seed", report->seed},
                      {"ok", report->ok()},
                      {"kept", kept},
                      {"in_flight", report->in_flight},
                      {"simulated_inputs", report->simulated_inputs},
                      {"killed", report->killed},
                      {"problems", report->problems}});
    } else if (!report->ok() || cli.runs == 1) {
      for (const std::string& line : describe_perturb(*report))
        std::printf("%s\n", line.c_str());
    }
  }
  if (json) {
    std::cout << nlohmann::json{{"ok", !failed}, {"runs", runs}}.dump(2) << "\n";
  } else if (failed) {
    std::printf("seed %llu broke it: grove sim --replay %s --perturb %llu --cut %g --faults %u\n",
                static_cast<unsigned long long>(*failed), dir.c_str(),
                static_cast<unsigned long long>(*failed), cli.cut, cli.kills);
  } else if (cli.runs > 1) {
    std::printf(
        "%u perturbations (seeds %llu to %llu): every invariant held; every broadcast "
        "and fence ended\n",
        cli.runs, static_cast<unsigned long long>(cli.seed),
        static_cast<unsigned long long>(cli.seed + cli.runs - 1));
  }
  return failed ? 1 : 0;
}

}  // namespace grove
