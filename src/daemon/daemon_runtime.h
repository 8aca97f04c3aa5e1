// The driver that runs a grpcomm Engine over the TCP transport on a libevent
// loop: frames in, effects out. Both roles use it: the controller (vpid 0)
// and every groved. Role-specific behaviour hangs off the hooks.
#pragma once

#include <event2/event.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "daemon/control_plane/control_messages.h"
#include "daemon/fault_trigger.h"
#include "grpcomm/effect_driver.h"
#include "grpcomm/engine.h"
#include "grpcomm/flight_recorder.h"
#include "os/event_handles.h"
#include "rml/transport/tcp_transport.h"
#include "util/log.h"
#include "util/param_registry.h"

namespace grove {

struct RuntimeOptions {
  Vpid self = 0;
  std::uint32_t dvm_size = 1;
  std::vector<std::byte> secret;
  std::string bind_host = "127.0.0.1";
  // This daemon comes back at its old vpid or joins a running DVM: its engine
  // starts from the controller's seed (join()); until then the engine's
  // frames wait, and dvm_size is not used.
  bool joining = false;
};

struct RuntimeHooks {
  // Every control frame addressed to this daemon, before its tag's owner
  // has it (the controller's liveness counts any frame as a sign of life).
  std::function<void(Vpid from)> heard_from;
  std::function<void(const BroadcastDone&)> on_broadcast_done;
  std::function<void(const ShowHelpTopic&)> on_help;
  std::function<void(const MembershipChanged&)> on_membership;
  std::function<void(Vpid)> on_peer_lost;
  // The controller's: a problem seen here or reported by a daemon
  // (report_problem), for an automatic flight dump.
  std::function<void(Vpid where, const std::string& text)> on_problem;
};

// The engine's configuration from the parameter registry.
EngineConfig engine_config_from(const ParamRegistry& params, Vpid self);

// Who owns each tag, and each fence scope (a prefix of fence signatures):
// the runtime routes control frames and delivered broadcasts by tag, and a
// fence's end by its signature. Handlers are shared, so one that ends its
// own claim while it runs is not destroyed under itself.
struct TagOwners {
  using ControlHandler = std::function<void(Vpid from, std::uint16_t tag, const Bytes& payload)>;
  using BroadcastHandler = std::function<void(const DeliverBroadcast&)>;
  using FenceHandler = std::function<void(const FenceDone&)>;
  std::map<std::uint16_t, std::shared_ptr<ControlHandler>> control;
  std::map<std::uint16_t, std::shared_ptr<BroadcastHandler>> broadcasts;
  std::map<std::string, std::shared_ptr<FenceHandler>> fences;  // by scope
};

// A component's claim on the tags it owns: while the claim lives, frames
// with those tags go to its handler; it gives them back as it goes. It may
// outlive the runtime (the controller closes every connection by ending its
// runtime before its components end): then there is nothing to give back.
class TagClaim {
 public:
  enum class Kind : std::uint8_t { control, broadcasts, fences };
  TagClaim() = default;
  TagClaim(std::weak_ptr<TagOwners> owners, Kind kind, std::vector<std::uint16_t> tags,
           std::string scope = {})
      : owners_(std::move(owners)), kind_(kind), tags_(std::move(tags)), scope_(std::move(scope)) {}
  TagClaim(TagClaim&& other) noexcept { *this = std::move(other); }
  TagClaim& operator=(TagClaim&& other) noexcept;
  TagClaim(const TagClaim&) = delete;
  TagClaim& operator=(const TagClaim&) = delete;
  ~TagClaim() { release(); }

 private:
  void release();
  std::weak_ptr<TagOwners> owners_;
  Kind kind_ = Kind::control;
  std::vector<std::uint16_t> tags_;
  std::string scope_;
};

class DaemonRuntime : private EffectDriver {
 public:
  static Result<std::unique_ptr<DaemonRuntime>> create(event_base* base,
                                                       const ParamRegistry& params, const Log& log,
                                                       RuntimeOptions options, RuntimeHooks hooks);
  ~DaemonRuntime();

  Result<Endpoint> listen();
  Status add_peer(Vpid vpid, const Endpoint& endpoint);

  Engine& engine() { return *engine_; }
  const Engine& engine() const { return *engine_; }
  TcpTransport& transport() { return *transport_; }
  Vpid self() const { return options_.self; }
  // The daemon set's size as the engine knows it (joins grow it; a joining
  // daemon's is known once it has its seed).
  std::uint32_t dvm_size() const {
    return static_cast<std::uint32_t>(engine_->membership().size());
  }

  // A point-to-point control frame, straight to the peer.
  void send_control(Vpid to, std::uint16_t tag, Bytes payload);
  // Controller only: a DVM-wide broadcast through the release seam.
  std::uint64_t broadcast(std::uint16_t tag, const Bytes& payload);
  void contribute(FenceRequest request);
  void declare_departure(Vpid vpid);
  // Controller only: a lost daemon came back at its vpid, or a new one joined
  // past the end (Engine::declare_return); false if the engine refused it.
  bool declare_return(Vpid vpid);
  // debug_fault's join points: dies here if this is where the plan says.
  void reach_join_fault(FaultPoint point);
  // Controller only: what the newcomer starts from (send it encode_join_seed).
  JoinSeed join_seed() const { return engine_->join_seed(); }
  // A joining daemon: its engine starts from the seed, and the frames that
  // arrived before it, then the contributions made before it, are handed to
  // it in order. Refused once joined, or if frames had to be let go.
  Status join(const JoinSeed& seed);
  bool awaiting_seed() const { return awaiting_seed_; }

  // A fence scope ended (Engine::end_fence_scope), as an input of record.
  void end_fence_scope(const std::string& scope);
  // The flight recording of this daemon's engine (grpcomm/flight_record.h);
  // empty if it keeps none (grpcomm_flight_recorder_size 0) or awaits its seed.
  Bytes flight_recording() const;
  // A fatal signal writes the recording into `dir` (grpcomm_flight_dump_dir)
  // before the daemon dies of it (daemon/fatal_signal_dump.h); `who` names
  // this daemon on stderr. Disarmed as the runtime ends.
  void arm_crash_dump(const std::string& dir, const std::string& who);
  // A problem this daemon saw that the DVM keeps a flight dump of (a fence
  // past its PMIX_TIMEOUT): to the controller, which decides (nothing is
  // sent when this daemon keeps no recording).
  void report_problem(const std::string& text);

  TimeNs now() const;
  // This daemon's counters for `grove status`.
  CountersReply counters(std::uint64_t request) const;

  // Each component claims the tags it owns, and the runtime routes each
  // control frame and delivered broadcast to its tag's owner (a tag claimed
  // twice is a bug: grove aborts, naming it). A control frame nobody owns
  // is logged and dropped; so is a broadcast (after it was forwarded).
  [[nodiscard]] TagClaim own_control(std::vector<std::uint16_t> tags,
                                     TagOwners::ControlHandler handler);
  [[nodiscard]] TagClaim own_broadcasts(std::vector<std::uint16_t> tags,
                                        TagOwners::BroadcastHandler handler);
  // The ends of fences whose signature starts with `scope` ("pmix:", ...).
  [[nodiscard]] TagClaim own_fences(std::string scope, TagOwners::FenceHandler handler);

 private:
  DaemonRuntime(event_base* base, const Log& log, RuntimeOptions options, RuntimeHooks hooks);
  void on_frame(Vpid from, std::vector<std::byte> frame);
  // Hooks never run inside a call the owner made (broadcast, contribute,
  // declare_departure): an op that completes at once (a one-daemon DVM)
  // must not report before the owner holds its id. Frames and timers take
  // effect at once; hooks wait for the loop, and run before any later ones.
  enum class Caller { owner, loop };
  void drain(Outbox& out, Caller caller);
  // Every engine input goes through here: `call` hands it to the engine,
  // the recorder keeps it with what the engine did, then drain().
  template <typename Call>
  void to_engine(FlightInputHead input, Caller caller, Call call);
  void take_frame(Vpid from, std::vector<std::byte> frame, Caller caller);
  void take_contribution(FenceRequest request, Caller caller);
  void apply(Effect& effect) { dispatch(effect, *this); }
  // EffectDriver.
  void send(SendFrame& effect) override;
  void deliver(DeliverBroadcast& effect) override;
  void fence_done(FenceDone& effect) override;
  void broadcast_done(BroadcastDone& effect) override;
  void set_timer(SetTimer& effect) override;
  void cancel_timer(CancelTimer& effect) override;
  void show_help(ShowHelpTopic& effect) override;
  void membership_changed(MembershipChanged& effect) override;
  void run_deferred_hooks();
  static void on_deferred_event(evutil_socket_t, short, void* arg);
  void arm_timer(const TimerId& id, TimeNs deadline_ns);
  static void on_timer_event(evutil_socket_t, short, void* arg);

  struct PendingTimer {
    DaemonRuntime* runtime = nullptr;
    TimerId id;
    EventPtr event;
  };

  event_base* base_;
  const Log& log_;
  RuntimeOptions options_;
  RuntimeHooks hooks_;
  std::uint64_t max_payload_ = 0;
  bool timing_ = false;  // grpcomm_enable_timing: log every finished broadcast
  FaultTrigger fault_;   // debug_fault: where this daemon dies, if anywhere
  std::unique_ptr<Engine> engine_;
  FlightRecorder recorder_;  // the engine's inputs (grpcomm_flight_recorder_size)
  // The inputs whose effects are being carried out, innermost last, and
  // which effect (FlightInput::parent and at).
  struct Dispatching {
    std::uint64_t input = 0;
    std::uint32_t at = 0;
  };
  std::vector<Dispatching> dispatching_;
  // A joining daemon's engine frames and contributions until its seed
  // arrives (the DVM sends a newcomer little before its seed; past 64 MiB
  // the join fails rather than drop a frame).
  static constexpr std::size_t kMaxBytesBeforeSeed = std::size_t{64} << 20;
  bool awaiting_seed_ = false;
  std::vector<std::pair<Vpid, std::vector<std::byte>>> before_seed_;
  std::size_t before_seed_bytes_ = 0;
  std::vector<FenceRequest> contributions_before_seed_;
  EngineConfig engine_config_;
  std::unique_ptr<TcpTransport> transport_;
  std::map<TimerId, std::unique_ptr<PendingTimer>> timers_;
  std::vector<Effect> deferred_hooks_;
  EventPtr deferred_event_;
  std::shared_ptr<TagOwners> owners_ = std::make_shared<TagOwners>();
};

}  // namespace grove
