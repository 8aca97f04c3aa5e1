#include "sim/flight_replay.h"

#include <algorithm>
#include <map>
#include <memory>

#include "grpcomm/join_seed.h"
#include "sim/invariant_checker.h"

namespace grove {
namespace {

constexpr std::size_t kMaxProblems = 20;

struct FrameMark {
  std::uint32_t crc = 0;
  std::uint32_t effect = 0;  // sent frames: 1-based in the sender's input's effects
  std::uint64_t size = 0;
  std::uint64_t input = 0;                // the receiver's input (received), the sender's (sent)
  const FlightInput* received = nullptr;  // the receiver's input (received frames)
};

using Link = std::pair<Vpid, Vpid>;  // from, to

}  // namespace

Result<std::unique_ptr<Engine>> replay_engine(const FlightRecording& recording,
                                              const ReplayOptions& options) {
  const FlightHeader& header = recording.header;
  EngineConfig config = engine_config_for(header);
  config.weakened = options.weakened;
  const std::string who = "daemon " + std::to_string(header.self) + "'s recording";
  if (header.fresh_daemons > 0) {
    if (header.self >= header.fresh_daemons) {
      return Error{who + " starts a DVM of " + std::to_string(header.fresh_daemons) +
                   " daemons without it"};
    }
    std::vector<Vpid> daemons(header.fresh_daemons);
    for (Vpid i = 0; i < header.fresh_daemons; ++i)
      daemons[i] = i;
    auto membership = Membership::create(std::move(daemons));
    if (!membership) return Error{who + ": " + membership.error().message};
    return std::make_unique<Engine>(std::move(config), std::move(*membership));
  }
  auto seed = decode_join_seed(recording.header.seed);
  if (!seed) return Error{who + ": " + seed.error().message};
  if (!seed->membership.is_alive(header.self))
    return Error{who + " starts from a seed that does not list it among the living"};
  return std::make_unique<Engine>(std::move(config), *seed);
}

// An input no real daemon could have recorded is refused: a replay must not
// hand it to an engine.
Status feed_recorded_input(Engine& engine, const FlightInput& input, Outbox& out) {
  const bool controller = engine.is_controller();
  switch (input.kind) {
    case FlightInputKind::frame:
      engine.on_frame(input.now, input.peer, std::span<const std::byte>(input.data), out);
      break;
    case FlightInputKind::timer:
      engine.on_timer(input.now,
                      TimerId{static_cast<TimerKind>(input.timer_kind),
                              static_cast<TopologyKind>(input.timer_topology), input.number},
                      out);
      break;
    case FlightInputKind::departure:
      if (!controller) return Error{"a departure declared by a daemon that is not the controller"};
      if (!engine.membership().is_alive(input.peer) || input.peer == engine.self())
        return Error{"a departure of a daemon that is not a living member"};
      engine.declare_departure(input.now, input.peer, out);
      break;
    case FlightInputKind::return_:
      if (!controller) return Error{"a return declared by a daemon that is not the controller"};
      engine.declare_return(input.now, input.peer, out);
      break;
    case FlightInputKind::release:
      if (!controller) return Error{"a release from a daemon that is not the controller"};
      engine.release_bcast(input.now, input.tag, input.data, out, input.flags);
      break;
    case FlightInputKind::contribute:
      engine.contribute(
          input.now, FenceRequest{input.text, input.participants, input.data, input.number}, out);
      break;
    case FlightInputKind::end_scope:
      engine.end_fence_scope(input.text);
      break;
  }
  return ok_status();
}

FlightInputHead head_of(const FlightInput& input) {
  return FlightInputHead{input.kind,  input.now,          input.peer,           input.tag,
                         input.flags, input.timer_kind,   input.timer_topology, input.number,
                         input.text,  input.participants, input.data,           input.parent,
                         input.at};
}

namespace {

// The order in which a daemon's frames went out: each input's in the order
// the engine made them, except that an input made while the driver carried
// out an earlier one's effects (FlightInput::parent, at) sent its frames
// there, before the earlier one's later frames.
class WireOrder {
 public:
  explicit WireOrder(std::size_t inputs) : sends_(inputs), children_(inputs) {}

  void add(std::size_t index, const FlightInput& input, const Outbox& out) {
    for (std::size_t e = 0; e < out.effects().size(); ++e) {
      if (const auto* send = std::get_if<SendFrame>(&out.effects()[e])) {
        const auto effect = static_cast<std::uint32_t>(e + 1);
        sends_[index].push_back(
            Send{effect, send->target,
                 FrameMark{flight_crc(send->frame), effect, send->frame.size(), index, nullptr}});
      }
    }
    if (input.parent > 0 && input.parent <= index) {
      children_[input.parent - 1].emplace_back(input.at, index);
    } else {
      top_.push_back(index);
    }
  }

  // Every frame, in the order it went out. An explicit stack: nesting is as
  // deep as a recording says.
  template <typename Visit>
  void sends(Visit visit) const {
    struct Step {
      std::size_t input, send, child;
    };
    std::vector<Step> stack;
    for (std::size_t root : top_) {
      stack.push_back(Step{root, 0, 0});
      while (!stack.empty()) {
        Step& step = stack.back();
        const auto& sends = sends_[step.input];
        const auto& children = children_[step.input];
        // A child made during effect k went out before the sends after k.
        if (step.child < children.size() &&
            (step.send == sends.size() || children[step.child].first < sends[step.send].effect)) {
          const std::size_t child = children[step.child++].second;
          stack.push_back(Step{child, 0, 0});
        } else if (step.send < sends.size()) {
          const Send& send = sends[step.send++];
          visit(send.target, send.mark);
        } else {
          stack.pop_back();
        }
      }
    }
  }

 private:
  struct Send {
    std::uint32_t effect = 0;  // 1-based, as FlightInput::at counts
    Vpid target = 0;
    FrameMark mark;
  };
  std::vector<std::vector<Send>> sends_;
  std::vector<std::vector<std::pair<std::uint32_t, std::size_t>>> children_;
  std::vector<std::size_t> top_;
};

class Replayer {
 public:
  Replayer(const ReplayOptions& options, std::size_t daemons)
      : options_(options), checker_(daemons) {}

  Status replay(const FlightRecording& recording, ReplayReport& report) {
    auto engine = replay_engine(recording, options_);
    if (!engine) return engine.error();
    const Vpid self = recording.header.self;
    DaemonReplay result;
    result.self = self;
    result.build = recording.build;
    result.fresh = recording.header.fresh_daemons > 0;
    fresh_[self] = result.fresh;
    WireOrder order(recording.inputs.size());
    for (std::size_t i = 0; i < recording.inputs.size(); ++i) {
      const FlightInput& input = recording.inputs[i];
      Outbox out;
      if (Status fed = feed_recorded_input(**engine, input, out); !fed) {
        diverged(report, self, i, input, "input " + std::to_string(i) + ": " + fed.error().message,
                 out);
        break;
      }
      ++result.inputs;
      if (!same_effects(input, out)) {
        diverged(report, self, i, input, describe_input(input), out);
        break;
      }
      if (Status held = (*engine)->check_invariants_after_input(); !held) {
        problem(report, "daemon " + std::to_string(self) + ", input " + std::to_string(i) +
                            ": engine invariant: " + held.error().message);
      }
      if (input.kind == FlightInputKind::frame) {
        received_[{input.peer, self}].push_back(
            FrameMark{flight_crc(input.data), 0, input.data.size(), i, &input});
      }
      if (input.parent > i) {
        problem(report, "daemon " + std::to_string(self) + ", input " + std::to_string(i) +
                            ": made while carrying out input " + std::to_string(input.parent - 1) +
                            ", which is not before it");
      }
      order.add(i, input, out);
      observe(report, self, out);
    }
    order.sends([&](Vpid target, const FrameMark& mark) {
      sent_[{self, target}].push_back(mark);
      if (options_.keep_matches) report.wire_order[self].emplace_back(mark.input, mark.effect);
    });
    result.accounting = (*engine)->accounting();
    result.stats = (*engine)->stats();
    result.accounting_matches = result.accounting == recording.header.accounting;
    result.counts_known = recording.header.taken_ns != 0;
    if (result.inputs == recording.inputs.size() && result.counts_known &&
        !result.accounting_matches) {
      problem(report, "daemon " + std::to_string(self) +
                          ": the replay's frame counts differ from those the daemon reported");
    }
    report.daemons.push_back(std::move(result));
    return ok_status();
  }

  // Every frame a daemon received from a replayed sender must be one that
  // sender's replay sent it, in the order sent (TCP keeps a link's order).
  void cross_check(ReplayReport& report) {
    for (auto& [link, received] : received_) {
      const auto [from, to] = link;
      if (!fresh_.count(from) || std::count(diverged_.begin(), diverged_.end(), from) ||
          std::count(diverged_.begin(), diverged_.end(), to)) {
        continue;  // no sender's history to check against
      }
      const std::vector<FrameMark>& sent = sent_[link];
      // Where each frame's (CRC, size) stands in what was sent, in order: a
      // search by bisection, not a scan per frame received.
      std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<std::size_t>> positions;
      for (std::size_t i = 0; i < sent.size(); ++i)
        positions[{sent[i].crc, sent[i].size}].push_back(i);
      auto find_from = [&](std::size_t next, const FrameMark& frame) {
        auto entry = positions.find({frame.crc, frame.size});
        if (entry == positions.end()) return sent.size();
        auto at = std::lower_bound(entry->second.begin(), entry->second.end(), next);
        return at == entry->second.end() ? sent.size() : *at;
      };
      std::size_t next = 0;
      bool matched_any = false;
      std::vector<const FrameMark*> unmatched;
      for (const FrameMark& frame : received) {
        const std::size_t at = find_from(next, frame);
        if (at == sent.size()) {
          // A sender that came back began a new life: what its old one sent
          // precedes its recording.
          if (!matched_any && !fresh_[from]) continue;
          unmatched.push_back(&frame);
          continue;
        }
        // Frames before a matched one were sent before the sender's
        // recording was taken: its replay must have sent them.
        for (const FrameMark* missing : unmatched) {
          problem(report, "daemon " + std::to_string(to) + ", input " +
                              std::to_string(missing->input) + ": " +
                              describe_input(*missing->received) +
                              ", which its sender's replay did not send");
        }
        unmatched.clear();
        report.sent_not_received += at - next;
        if (options_.keep_matches)
          report.matches.push_back(MatchedFrame{from, to, sent[at].input, frame.input});
        next = at + 1;
        matched_any = true;
        ++report.frames_checked;
      }
      // After the last match: sent after the sender's recording was taken
      // (the recordings of a dump are taken one daemon after another).
      report.received_after_recording += unmatched.size();
      if (options_.keep_matches && !unmatched.empty()) {
        auto [at, fresh] = report.horizon.emplace(to, unmatched.front()->input);
        if (!fresh) at->second = std::min(at->second, unmatched.front()->input);
      }
      report.sent_not_received += sent.size() - next;
    }
    for (auto& [link, sent] : sent_) {
      if (!received_.count(link) && fresh_.count(link.second))
        report.sent_not_received += sent.size();
    }
  }

 private:
  static bool same_effects(const FlightInput& input, const Outbox& out) {
    if (input.effects.size() != out.effects().size()) return false;
    for (std::size_t i = 0; i < input.effects.size(); ++i) {
      if (!(summarize_effect(out.effects()[i]) == input.effects[i])) return false;
    }
    return true;
  }

  void diverged(ReplayReport& report, Vpid self, std::uint64_t index, const FlightInput& input,
                std::string what, const Outbox& out) {
    ReplayDivergence divergence;
    divergence.daemon = self;
    divergence.input = index;
    divergence.what = std::move(what);
    for (const FlightEffect& effect : input.effects)
      divergence.recorded.push_back(describe_effect(effect));
    for (const Effect& effect : out.effects())
      divergence.replayed.push_back(describe_effect(summarize_effect(effect)));
    if (!report.divergence) {
      report.divergence = std::move(divergence);
    } else {
      problem(report, "daemon " + std::to_string(self) + " diverged too, at input " +
                          std::to_string(index) + ": " + divergence.what);
    }
    diverged_.push_back(self);
  }

  void observe(ReplayReport& report, Vpid self, Outbox& out) {
    for (const Effect& effect : out.effects()) {
      if (const auto* deliver = std::get_if<DeliverBroadcast>(&effect)) {
        if (Status held = checker_.on_deliver(self, *deliver); !held)
          problem(report, held.error().message);
      } else if (const auto* done = std::get_if<FenceDone>(&effect)) {
        if (Status held = checker_.on_fence_done(self, *done); !held)
          problem(report, held.error().message);
      }
    }
  }

  void problem(ReplayReport& report, std::string text) {
    if (report.problems.size() < kMaxProblems) report.problems.push_back(std::move(text));
  }

  const ReplayOptions& options_;
  InvariantChecker checker_;
  std::map<Link, std::vector<FrameMark>> sent_;
  std::map<Link, std::vector<FrameMark>> received_;
  std::map<Vpid, bool> fresh_;  // replayed daemons, and whether from the DVM's start
  std::vector<Vpid> diverged_;
};

}  // namespace

Result<ReplayReport> replay_flights(const std::vector<FlightRecording>& recordings,
                                    const ReplayOptions& options) {
  if (recordings.empty()) return Error{"no flight recordings to replay"};
  std::vector<const FlightRecording*> order;
  Vpid highest = 0;
  for (const FlightRecording& recording : recordings) {
    const FlightHeader& header = recording.header;
    if (!recording.complete()) {
      return Error{"daemon " + std::to_string(header.self) + "'s recording lost its first " +
                   std::to_string(header.first_input) + " of " +
                   std::to_string(header.inputs_total) +
                   " inputs (they did not fit in grpcomm_flight_recorder_size); a replay needs a "
                   "daemon's whole history"};
    }
    order.push_back(&recording);
    highest = std::max(highest, header.self);
  }
  std::sort(order.begin(), order.end(),
            [](const auto* a, const auto* b) { return a->header.self < b->header.self; });
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (order[i]->header.self == order[i - 1]->header.self)
      return Error{"two recordings of daemon " + std::to_string(order[i]->header.self)};
  }
  ReplayReport report;
  Replayer replayer(options, std::size_t{highest} + 1);
  for (const FlightRecording* recording : order) {
    if (Status replayed = replayer.replay(*recording, report); !replayed) return replayed.error();
  }
  replayer.cross_check(report);
  return report;
}

std::vector<std::string> describe_replay(const ReplayReport& report,
                                         const std::string& this_build) {
  std::vector<std::string> lines;
  std::uint64_t inputs = 0;
  for (const DaemonReplay& daemon : report.daemons)
    inputs += daemon.inputs;
  lines.push_back("replayed " + std::to_string(report.daemons.size()) + " daemons, " +
                  std::to_string(inputs) + " inputs");
  for (const DaemonReplay& daemon : report.daemons) {
    const auto total = daemon.accounting.total();
    std::string line =
        "  daemon " + std::to_string(daemon.self) + ": " + std::to_string(daemon.inputs) +
        " inputs" + (daemon.fresh ? "" : " (from its return or join)") + ", sent " +
        std::to_string(total.frames) + " frames, " + std::to_string(total.bytes) + " bytes; " +
        (!daemon.counts_known        ? "written as it died (its counts not taken)"
         : daemon.accounting_matches ? "as the daemon counted"
                                     : "NOT as the daemon counted");
    if (daemon.build != this_build) line += "; recorded by grove " + daemon.build;
    lines.push_back(std::move(line));
  }
  lines.push_back("frames received and matched to their sender's replay: " +
                  std::to_string(report.frames_checked) +
                  "; sent and not received: " + std::to_string(report.sent_not_received) +
                  " (in flight when recorded, or lost with a link); received, sent after their "
                  "sender's recording was taken: " +
                  std::to_string(report.received_after_recording));
  if (report.divergence) {
    const ReplayDivergence& d = *report.divergence;
    lines.push_back("DIVERGED: daemon " + std::to_string(d.daemon) + ", input " +
                    std::to_string(d.input) + ": " + d.what);
    lines.push_back("  recorded effects (" + std::to_string(d.recorded.size()) + "):");
    for (const std::string& effect : d.recorded)
      lines.push_back("    " + effect);
    lines.push_back("  replayed effects (" + std::to_string(d.replayed.size()) + "):");
    for (const std::string& effect : d.replayed)
      lines.push_back("    " + effect);
  }
  for (const std::string& problem : report.problems)
    lines.push_back("PROBLEM: " + problem);
  if (report.ok()) lines.push_back("no divergence; every invariant held");
  return lines;
}

}  // namespace grove
