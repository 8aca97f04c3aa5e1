// A synchronous, in-order network of engines for unit tests: frames are
// delivered one at a time in FIFO order, a test may hold some back (to make a
// notice arrive late), and timers fire on request. Every non-send effect is
// recorded per daemon.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "grpcomm/engine.h"
#include "grpcomm/flight_recorder.h"

namespace grove::test {

struct InFlight {
  Vpid from = 0;
  Vpid to = 0;
  SendPath path = SendPath::routed;
  WireFrame frame;
  FrameHeader header;
};

class LocalCluster {
 public:
  LocalCluster(std::uint32_t daemons, EngineConfig base,
               const std::function<void(EngineConfig&)>& adjust = {});

  Engine& engine(Vpid vpid) { return *engines_[vpid]; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(engines_.size()); }

  // Drains the outbox of one input at `vpid`.
  void absorb(Vpid vpid, Outbox& out);
  void contribute(Vpid vpid, const FenceRequest& request);
  void contribute_all(const std::string& signature, const Bytes& data_each = {});
  std::uint64_t release(std::uint16_t tag, const Bytes& payload);
  void kill(Vpid vpid) { alive_[vpid] = false; }
  void declare_departure(Vpid vpid);
  // The controller declares vpid back (a new process from the controller's
  // seed, with no effects recorded yet), or a join at the next vpid. Returns
  // the vpid.
  Vpid bring_back(Vpid vpid);
  Vpid join() { return bring_back(size()); }

  // Delivers frames until none is left or only held ones remain. `hold`
  // returning true keeps a frame back (in order) until release_held().
  void run(const std::function<bool(const InFlight&)>& hold = {});
  void release_held() {
    for (auto& frame : held_)
      queue_.push_back(std::move(frame));
    held_.clear();
  }
  std::size_t held() const { return held_.size(); }
  // Fires every armed timer (in order of arming).
  void fire_timers();
  // Timers fire and what they send is delivered, pass after pass, until
  // none is left (an inner daemon's acks wait for its children's).
  void settle();

  const std::vector<Effect>& effects(Vpid vpid) const { return effects_[vpid]; }
  std::vector<FenceDone> fence_done(Vpid vpid) const;
  std::vector<DeliverBroadcast> delivered(Vpid vpid) const;
  std::vector<InFlight>& sent() { return sent_; }  // every frame ever sent, in order
  std::uint64_t now() const { return now_; }
  // Moves the cluster's clock on (inputs after it happen later).
  void advance(TimeNs by) { now_ += by; }

  // From now on every engine's inputs are recorded as a daemon records
  // them (grpcomm/flight_recorder.h), each within budget_bytes; a daemon
  // brought back starts a recording from its seed.
  void record_flights(std::size_t budget_bytes);
  // The recording of vpid's engine, as `grove status --dump` writes it.
  Bytes flight(Vpid vpid) const;

 private:
  std::vector<EngineConfig> configs_;
  std::vector<std::unique_ptr<Engine>> engines_;
  std::vector<bool> alive_;
  std::deque<InFlight> queue_;
  std::vector<InFlight> held_;
  std::vector<InFlight> sent_;
  std::vector<std::vector<Effect>> effects_;
  std::map<std::pair<Vpid, TimerId>, TimeNs> timers_;
  TimeNs now_ = 1'000;
  std::vector<FlightRecorder> recorders_;  // by vpid, once record_flights() is called
  void note(Vpid vpid, const FlightInputHead& input, const Outbox& out);
};

}  // namespace grove::test
