#include "launcher/sim_replay.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "daemon/flight_dump.h"
#include "daemon/versions.h"
#include "launcher/cli_context.h"
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
                       {"accounting_matches", daemon.accounting_matches}});
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

}  // namespace grove
