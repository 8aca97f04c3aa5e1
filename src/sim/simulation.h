// The simulator's world, shared by its files: simulator.cc runs events,
// simulation_effects.cc applies an engine's effects to the modelled network,
// simulation_membership.cc kills, brings back and adds daemons and checks
// liveness at the end. Internal to the simulator (run_simulation is its door).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "grpcomm/engine.h"
#include "sim/event_queue.h"
#include "sim/invariant_checker.h"
#include "sim/pmix_fence_layer.h"
#include "sim/simulator.h"
#include "util/random_stream.h"

namespace grove::sim_detail {

// Frames, timers and contributions are addressed to one life of a daemon:
// what was meant for a daemon that died is not handed to its successor.
struct FrameEvent {
  Vpid to = 0;
  Vpid from = 0;
  WireFrame frame;
  std::uint32_t life = 0;  // the target's, when sent
};
struct TimerEvent {
  Vpid daemon = 0;
  TimerId id;
  std::uint64_t token = 0;
};
struct KillEvent {
  Vpid victim = 0;
};
struct DetectEvent {
  Vpid victim = 0;
};
struct ContributeEvent {
  Vpid daemon = 0;
  std::uint64_t round = 1;
  std::uint32_t life = 0;
};
// A lost daemon comes back at its vpid, or a new one joins past the end.
struct ReturnEvent {
  Vpid vpid = 0;
};
struct JoinEvent {};
// A shared NIC's next frame may be done (stale unless `generation` is still
// the NIC's: every change to what it carries reschedules).
struct NicEvent {
  Vpid daemon = 0;
  std::uint64_t generation = 0;
};
using EventBody = std::variant<FrameEvent, TimerEvent, KillEvent, DetectEvent, ContributeEvent,
                               NicEvent, ReturnEvent, JoinEvent>;

// A participant contributes to a round up to this long after it may: to the
// first after the start, to each next one after it finished the last.
constexpr TimeNs kContributeSpreadNs = 20'000;

std::string format_time(TimeNs ns);

class Simulation {
 public:
  explicit Simulation(const SimOptions& options);
  SimResult run();

 private:
  void schedule(TimeNs at, EventBody body) { queue_.push(at, std::move(body)); }
  void handle(const EventBody& event);
  void drain(Vpid daemon, TimeNs now, Outbox& out);
  // Fair NIC sharing: hand the frames whose last byte left to the links and
  // schedule the NIC's next event.
  void service_nic(Vpid daemon, TimeNs now);
  void kill(Vpid victim, TimeNs now);
  // simulation_membership.cc: returns and joins.
  void plan_elastic();
  void on_detected(Vpid victim);
  void bring_back(Vpid vpid);
  void join();
  // The daemon at vpid starts (again, or as a join: vpid is the next one)
  // from the controller's seed.
  void start_from_seed(Vpid vpid);
  void fail(const std::string& what);
  // The line is built only when tracing is on (`make` returns it): a
  // million-daemon run with --trace 0 built a string per event otherwise.
  template <typename MakeLine>
  void trace(MakeLine make) {
    if (options_.trace_lines > 0) trace_line(make());
  }
  void trace_line(std::string line);
  void plan_faults();
  bool fault_fires(Vpid daemon, const Outbox& out) const;
  bool bruck_fault_fires(const FaultSpec& fault, const Effect& effect) const;
  void check_liveness();
  FenceRequest request_for(Vpid daemon);
  class EffectsOf;

  const SimOptions& options_;
  EngineConfig config_;                // every engine's but `self`
  std::string signature_;              // the engines' name for the fence
  std::optional<SimPmixFences> pmix_;  // with options.pmix_fences
  // One stream per subsystem, split from the run's seed, so more draws in
  // one never move another's (docs/simulator.md, "Randomness").
  struct Streams {
    RandomStream participants, contribute, payloads, jitter, faults, detect, elastic;
  };
  Streams rng_;
  std::vector<Engine> engines_;  // one block: a million heap blocks cost seconds
  std::vector<bool> alive_;
  std::vector<std::uint32_t> life_;  // by vpid: how many times it came back
  // The daemons hosting the fence's participants, three ways.
  struct Participants {
    std::vector<bool> by_vpid;
    std::vector<Vpid> list;
    VpidSet set;
  };
  Participants participants_;
  // The modelled network: each daemon's NIC (one model or the other) and
  // the links' FIFO clocks.
  struct InFlight {
    FrameEvent frame;
    TimeNs latency = 0;
  };
  struct Wires {
    std::vector<DaemonNic> nics;                // NicSharing::fifo
    std::vector<SharedNic> shared_nics;         // NicSharing::fair
    std::vector<std::uint64_t> nic_generation;  // of shared_nics' next event
    std::unordered_map<std::uint64_t, InFlight> in_flight;
    std::uint64_t next_transfer = 1;
    LinkClock links;
  };
  Wires net_;
  EventQueue<EventBody> queue_;
  // Each daemon's armed timers, by the token their queued expiry carries
  // (the expiry of a timer re-armed or cancelled since finds another).
  struct Timers {
    std::map<std::pair<Vpid, TimerId>, std::uint64_t> armed;
    std::uint64_t next_token = 1;
  };
  Timers timers_;
  InvariantChecker checker_;
  Outbox outbox_;  // handle()'s, reused
  std::deque<std::string> trace_;
  struct Faults {
    std::vector<FaultSpec> planned;
    std::vector<bool> done;          // by index into planned
    std::uint32_t returns_left = 0;  // victims still to come back (--returns)
  };
  Faults faults_;
  // Each round's first contribution and last completion (UINT64_MAX and 0
  // until seen).
  struct Rounds {
    std::vector<TimeNs> start;
    std::vector<TimeNs> end;
  };
  Rounds rounds_;
  TimeNs now_ = 0;
  SimResult result_;
};

}  // namespace grove::sim_detail
