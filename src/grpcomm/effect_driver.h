// The one contract between the engine and whatever runs it: the daemon
// (over TCP), the simulator (over virtual time) and the unit tests' cluster.
// A driver implements one method per effect; `dispatch` hands each effect to
// its method with std::visit over an explicit overload set, so an effect
// added to the variant without a method here is a compile error, and a driver
// that leaves a method out cannot be instantiated. Nothing is dropped silently.
#pragma once

#include "grpcomm/effects.h"

namespace grove {

class EffectDriver {
 public:
  virtual ~EffectDriver() = default;
  virtual void send(SendFrame& effect) = 0;
  virtual void deliver(DeliverBroadcast& effect) = 0;
  virtual void fence_done(FenceDone& effect) = 0;
  // The originator's report of a finished broadcast: the timing of record.
  virtual void broadcast_done(BroadcastDone& effect) = 0;
  virtual void set_timer(SetTimer& effect) = 0;
  virtual void cancel_timer(CancelTimer& effect) = 0;
  virtual void show_help(ShowHelpTopic& effect) = 0;
  virtual void membership_changed(MembershipChanged& effect) = 0;
};

void dispatch(Effect& effect, EffectDriver& driver);

// Every effect of the outbox, in order; the outbox is left empty.
void dispatch_all(Outbox& out, EffectDriver& driver);

}  // namespace grove
