// Replays flight recordings (grpcomm/flight_record.h): each daemon's inputs
// go to a fresh engine made as the recorded one was, and every input must
// have the effects it had. Then the daemons are checked against each other:
// every frame a daemon recorded receiving must be one its sender's replay
// sent, in order; the simulator's invariants (I1, I2, I5) and each engine's
// own hold over the whole history; and each engine ends with the counts the
// real one reported. docs/simulator.md, "Flight recordings".
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grpcomm/flight_record.h"
#include "grpcomm/repair_rules.h"

namespace grove {

struct ReplayOptions {
  // Tests only: replay with these repair rules in their naive forms.
  RepairRules weakened;
  // Keep every received frame's match to the input that sent it
  // (ReplayReport::matches; grove sim --perturb cuts the history by them).
  bool keep_matches = false;
};

// A frame `to` received (its input `received`) matched to the input of
// `from` whose effects sent it.
struct MatchedFrame {
  Vpid from = 0, to = 0;
  std::uint64_t sent_by = 0;
  std::uint64_t received = 0;
};

// The first input whose effects differ from the recorded ones.
struct ReplayDivergence {
  Vpid daemon = 0;
  std::uint64_t input = 0;  // counted from the daemon's start
  std::string what;         // the input
  std::vector<std::string> recorded;
  std::vector<std::string> replayed;
};

struct DaemonReplay {
  Vpid self = 0;
  std::string build;
  std::uint64_t inputs = 0;  // replayed
  bool fresh = true;         // from the DVM's start (not a return or join)
  Accounting accounting;     // the replayed engine's
  bool accounting_matches = false;
  // Written as the daemon died of a fatal signal: its counts were not taken.
  bool counts_known = true;
  EngineStats stats;
};

struct ReplayReport {
  std::vector<DaemonReplay> daemons;  // by vpid
  std::optional<ReplayDivergence> divergence;
  // Broken invariants and frames received that no sender's replay sent.
  std::vector<std::string> problems;
  // Frames a replay sent that their receiver has not recorded: in flight
  // when the recordings were taken, or lost with a link or a daemon.
  std::uint64_t sent_not_received = 0;
  std::uint64_t frames_checked = 0;  // received frames matched to their sender's
  // Received after the last frame matched on their link: sent once the
  // sender's recording was taken (a dump's are taken one after another).
  std::uint64_t received_after_recording = 0;
  // With ReplayOptions::keep_matches: every matched frame; each sender's
  // frames in the order they went out, as (input, effect: 1-based in that
  // input's effects); and, by daemon, its first input that is a frame its
  // sender sent after its own recording was taken (what follows it depends
  // on a part of the history no recording holds).
  std::vector<MatchedFrame> matches;
  std::map<Vpid, std::vector<std::pair<std::uint64_t, std::uint32_t>>> wire_order;
  std::map<Vpid, std::uint64_t> horizon;
  bool ok() const { return !divergence && problems.empty(); }
};

// Refuses recordings it cannot replay (one that lost its start, two of one
// daemon, a start it cannot rebuild), saying which and why.
Result<ReplayReport> replay_flights(const std::vector<FlightRecording>& recordings,
                                    const ReplayOptions& options = {});

// The pieces of a replay, for tools that time or drive one: a fresh engine
// made as the recorded one was, and one recorded input handed to it
// (refused, with why, if no real daemon could have recorded it).
Result<std::unique_ptr<Engine>> replay_engine(const FlightRecording& recording,
                                              const ReplayOptions& options = {});
Status feed_recorded_input(Engine& engine, const FlightInput& input, Outbox& out);
// The input as a driver would have handed it to a recorder.
FlightInputHead head_of(const FlightInput& input);

// The report as the lines `grove sim --replay` prints; recordings made by
// another build than `this_build` are named as such.
std::vector<std::string> describe_replay(const ReplayReport& report, const std::string& this_build);

}  // namespace grove
