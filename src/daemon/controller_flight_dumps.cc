// The controller's automatic flight dumps (control_plane/auto_flight_dumps.h,
// docs/simulator.md "Automatic dumps"): the problems daemons report, a stall
// watch over the controller's own broadcasts, and each dump's gathering,
// which is `grove status --dump`'s.
#include <algorithm>

#include "daemon/controller.h"
#include "os/binary_files.h"
#include "os/timer.h"
#include "rml/tag_registry.h"

namespace grove {
namespace {

// A dump that finds a plain grove status being answered tries again this
// often, for longer than that status's 3 s deadline.
constexpr int kGatherAttempts = 25;
constexpr std::int64_t kGatherRetryMs = 200;

}  // namespace

std::string Controller::flight_dump_base() const {
  const std::string base = params_.get_string("grpcomm_flight_dump_dir");
  return base.empty() ? identity_.dvm.directory + ".flight" : base;
}

std::vector<std::string> Controller::daemon_param_arguments() const {
  std::vector<std::string> arguments = params_.child_arguments();
  // Every daemon's crash dumps go where the controller's dumps go.
  if (params_.get_string("grpcomm_flight_dump_dir").empty())
    arguments.insert(arguments.end(), {"--mca", "grpcomm_flight_dump_dir", flight_dump_base()});
  return arguments;
}

void Controller::start_flight_dumps() {
  const std::string base = flight_dump_base();
  runtime_->arm_crash_dump(base, "grove controller");
  // Nothing to dump where no daemon keeps a recording (the parameter is the DVM's).
  const bool recording = params_.get_size("grpcomm_flight_recorder_size") > 0;
  cli_.flight.policy = AutoFlightDumps(
      base, recording ? static_cast<std::uint32_t>(params_.get_int("grpcomm_flight_dumps")) : 0);
  const std::int64_t stall_ms = params_.get_int("grpcomm_flight_dump_stall_ms");
  cli_.flight.stall_ns = static_cast<TimeNs>(stall_ms) * 1'000'000;
  if (!cli_.flight.policy.on() || stall_ms == 0) return;
  // A stall is seen at most half its length late; a long one is looked for
  // every 5 s at most (one wake, not one per broadcast).
  cli_.flight.stall_watch = Timer(loop_->base(), [this] { check_stalled_broadcast(); });
  cli_.flight.stall_watch.arm_every(std::clamp<std::int64_t>(stall_ms / 2, 1, 5000));
}

void Controller::check_stalled_broadcast() {
  const auto open = runtime_->engine().oldest_open_broadcast();
  if (!open) return;
  const TimeNs now = runtime_->now();
  if (now - std::min(open->started_ns, now) < cli_.flight.stall_ns) return;
  // One report per stalled op; a later one is reported once this one ends.
  const std::pair key{open->kind, open->id};
  if (cli_.flight.stalled == key) return;
  cli_.flight.stalled = key;
  on_problem(kControllerVpid, "broadcast " + std::string(tag_name(open->tag)) + " (op " +
                                  std::to_string(open->id) + " on the " +
                                  std::string(topology_name(open->kind)) +
                                  " tree) not complete after " +
                                  std::to_string((now - open->started_ns) / 1'000'000) + " ms");
}

void Controller::on_problem(Vpid where, const std::string& text) {
  if (!cli_.flight.policy.on() || stopping_.sequence.stopping()) return;
  using What = AutoFlightDumps::Decision::What;
  const auto decision = cli_.flight.policy.problem_seen(where, text, runtime_->now());
  if (decision.what == What::joined) {
    log_.error_limited("flight-dump", "daemon %u: %s: in the flight dump %s", where, text.c_str(),
                       decision.dir.c_str());
    // Written already: its problems.txt says this one too.
    if (cli_.flight.policy.dumps().back().finished)
      write_problems(cli_.flight.policy.dumps().back());
    return;
  }
  if (decision.what == What::dropped) {
    log_.error_limited("flight-dump", "daemon %u: %s: no flight dump (grpcomm_flight_dumps made)",
                       where, text.c_str());
    return;
  }
  log_.error("daemon %u: %s: every daemon's flight recording goes to %s", where, text.c_str(),
             decision.dir.c_str());
  gather_flight_dump(kGatherAttempts);
}

void Controller::gather_flight_dump(int attempts) {
  const AutoFlightDumps::Dump& dump = cli_.flight.policy.dumps().back();
  if (stopping_.sequence.stopping()) {
    cli_.flight.policy.finished(0, 0, "the DVM is stopping");
    return;
  }
  // A plain grove status being answered asked the daemons for no
  // recordings: the dump waits for its end (its deadline is 3 s).
  if (cli_.service.gathering() && attempts > 1) {
    run_later(loop_->base(), kGatherRetryMs,
              [this, attempts] { gather_flight_dump(attempts - 1); });
    return;
  }
  CountersReply own = runtime_->counters(0);
  own.flight = runtime_->flight_recording();
  const std::uint64_t requester =
      hold_reply([this](const nlohmann::json& reply) { automatic_dump_answered(reply); });
  apply(cli_.service.status_requested(requester, std::move(own), roster_->living(), dump.dir));
}

void Controller::automatic_dump_answered(const nlohmann::json& reply) {
  if (cli_.flight.policy.dumps().empty()) return;
  const AutoFlightDumps::Dump& dump = cli_.flight.policy.dumps().back();
  const nlohmann::json written = reply.value("flight_dump", nlohmann::json::object());
  std::string error = written.value("error", reply.value("error", std::string()));
  if (error.empty() && !written.contains("files")) error = "no answer from the daemons";
  if (error.empty()) write_problems(dump);
  cli_.flight.policy.finished(written.value("files", std::size_t{0}),
                              written.value("bytes", std::uint64_t{0}), error);
  if (error.empty()) {
    log_.error("flight dump %s: %zu recordings, %llu bytes (grove sim --replay %s)",
               dump.dir.c_str(), dump.files, static_cast<unsigned long long>(dump.bytes),
               dump.dir.c_str());
  } else {
    log_.error("flight dump %s not written: %s", dump.dir.c_str(), error.c_str());
  }
}

void Controller::write_problems(const AutoFlightDumps::Dump& dump) {
  // What the dump is for, beside the recordings.
  std::string text;
  for (const std::string& problem : dump.problems)
    text += problem + "\n";
  if (Status wrote = write_file_atomically(dump.dir + "/problems.txt", to_bytes(text)); !wrote)
    log_.error("%s", wrote.error().message.c_str());
}

nlohmann::json Controller::flight_dumps_json() const {
  nlohmann::json dumps = nlohmann::json::array();
  for (const AutoFlightDumps::Dump& dump : cli_.flight.policy.dumps()) {
    nlohmann::json entry{{"dir", dump.dir}, {"problems", dump.problems}};
    entry["state"] = !dump.finished ? "gathering" : dump.error.empty() ? "written" : "failed";
    if (dump.finished && dump.error.empty()) {
      entry["files"] = dump.files;
      entry["bytes"] = dump.bytes;
    }
    if (!dump.error.empty()) entry["error"] = dump.error;
    dumps.push_back(std::move(entry));
  }
  return {
      {"on", cli_.flight.policy.on()}, {"dumps", dumps}, {"dropped", cli_.flight.policy.dropped()}};
}

}  // namespace grove
