#include "grpcomm/effect_driver.h"

namespace grove {
namespace {

template <typename... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
template <typename... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

}  // namespace

void dispatch(Effect& effect, EffectDriver& driver) {
  // One lambda per alternative, no catch-all: a new effect type fails here.
  std::visit(Overloaded{
                 [&](SendFrame& e) { driver.send(e); },
                 [&](DeliverBroadcast& e) { driver.deliver(e); },
                 [&](FenceDone& e) { driver.fence_done(e); },
                 [&](BroadcastDone& e) { driver.broadcast_done(e); },
                 [&](SetTimer& e) { driver.set_timer(e); },
                 [&](CancelTimer& e) { driver.cancel_timer(e); },
                 [&](ShowHelpTopic& e) { driver.show_help(e); },
                 [&](MembershipChanged& e) { driver.membership_changed(e); },
             },
             effect);
}

void dispatch_all(Outbox& out, EffectDriver& driver) {
  for (Effect& effect : out.mutable_effects())
    dispatch(effect, driver);
  out.clear();
}

}  // namespace grove
