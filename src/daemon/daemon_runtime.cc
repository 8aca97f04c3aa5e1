#include "daemon/daemon_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "daemon/fatal_signal_dump.h"
#include "daemon/versions.h"
#include "grpcomm/join_seed.h"
#include "os/memory_use.h"
#include "rml/transport/frame_seal.h"
#include "util/clock.h"

namespace grove {

EngineConfig engine_config_from(const ParamRegistry& params, Vpid self) {
  EngineConfig config;
  config.self = self;
  config.radices = {static_cast<std::uint32_t>(params.get_int("rml_base_radix")),
                    static_cast<std::uint32_t>(params.get_int("rml_base_radix2"))};
  config.low_radix_release = params.get_bool("grpcomm_low_radix_release");
  config.fence_topology = params.get_string("grpcomm_fence_topology") == "bruck"
                              ? FenceTopology::bruck
                              : FenceTopology::tree;
  config.compress_threshold = params.get_size("grpcomm_compress_threshold");
  config.max_payload = params.get_size("rml_base_max_frame_size");
  config.release_delay_ns =
      static_cast<TimeNs>(params.get_int("grpcomm_release_delay_ms")) * 1'000'000ULL;
  config.release_delay_target = params.get_int("grpcomm_release_delay_target");
  config.ack_delay_ns =
      static_cast<TimeNs>(params.get_int("grpcomm_release_ack_delay_us")) * 1'000ULL;
  config.prompt_ack_signature = kBenchBarrierSignature;
#ifdef GROVE_CHECK_INVARIANTS
  config.track_touched_ops = true;  // for check_invariants_after_input
#endif
  return config;
}

DaemonRuntime::DaemonRuntime(event_base* base, const Log& log, RuntimeOptions options,
                             RuntimeHooks hooks)
    : base_(base), log_(log), options_(std::move(options)), hooks_(std::move(hooks)) {}

TagClaim& TagClaim::operator=(TagClaim&& other) noexcept {
  if (this != &other) {
    release();
    owners_ = std::exchange(other.owners_, {});
    kind_ = other.kind_;
    tags_ = std::move(other.tags_);
    scope_ = std::move(other.scope_);
  }
  return *this;
}

void TagClaim::release() {
  if (auto owners = owners_.lock()) {
    for (std::uint16_t tag : tags_) {
      if (kind_ == Kind::control) owners->control.erase(tag);
      if (kind_ == Kind::broadcasts) owners->broadcasts.erase(tag);
    }
    if (kind_ == Kind::fences) owners->fences.erase(scope_);
  }
  owners_.reset();
}

namespace {

template <typename Handler>
void claim(std::map<std::uint16_t, std::shared_ptr<Handler>>& owners,
           const std::vector<std::uint16_t>& tags, Handler handler) {
  auto shared = std::make_shared<Handler>(std::move(handler));
  for (std::uint16_t tag : tags) {
    if (!owners.emplace(tag, shared).second) {
      std::fprintf(stderr, "grove: tag %s (%u) is claimed twice\n",
                   std::string(tag_name(tag)).c_str(), tag);
      std::abort();
    }
  }
}

}  // namespace

TagClaim DaemonRuntime::own_control(std::vector<std::uint16_t> tags,
                                    TagOwners::ControlHandler handler) {
  claim(owners_->control, tags, std::move(handler));
  return TagClaim(owners_, TagClaim::Kind::control, std::move(tags));
}

TagClaim DaemonRuntime::own_broadcasts(std::vector<std::uint16_t> tags,
                                       TagOwners::BroadcastHandler handler) {
  claim(owners_->broadcasts, tags, std::move(handler));
  return TagClaim(owners_, TagClaim::Kind::broadcasts, std::move(tags));
}

TagClaim DaemonRuntime::own_fences(std::string scope, TagOwners::FenceHandler handler) {
  if (!owners_->fences.emplace(scope, std::make_shared<TagOwners::FenceHandler>(std::move(handler)))
           .second) {
    std::fprintf(stderr, "grove: fence scope '%s' is claimed twice\n", scope.c_str());
    std::abort();
  }
  return TagClaim(owners_, TagClaim::Kind::fences, {}, std::move(scope));
}

DaemonRuntime::~DaemonRuntime() {
  disarm_fatal_signal_dump(recorder_);
  deferred_event_.reset();
  timers_.clear();
  transport_.reset();
}

Result<std::unique_ptr<DaemonRuntime>> DaemonRuntime::create(event_base* base,
                                                             const ParamRegistry& params,
                                                             const Log& log, RuntimeOptions options,
                                                             RuntimeHooks hooks) {
  // A joining daemon's engine waits for its seed; until then it holds a
  // stand-in view that contains it (frames are not handed to it).
  const Vpid size = options.joining ? options.self + 1 : options.dvm_size;
  std::vector<Vpid> daemons(size);
  for (Vpid i = 0; i < size; ++i)
    daemons[i] = i;
  auto membership = Membership::create(daemons);
  if (!membership) return membership.error();
  if (options.self >= size) {
    return Error{"vpid " + std::to_string(options.self) + " is outside a DVM of " +
                 std::to_string(options.dvm_size)};
  }
  std::unique_ptr<DaemonRuntime> runtime(
      new DaemonRuntime(base, log, std::move(options), std::move(hooks)));
  runtime->max_payload_ = params.get_size("rml_base_max_frame_size");
  runtime->timing_ = params.get_bool("grpcomm_enable_timing");
  auto fault_plan = parse_fault_plan(params.get_string("debug_fault"));
  if (!fault_plan) return fault_plan.error();
  runtime->fault_ = FaultTrigger(*fault_plan, runtime->options_.self);
  runtime->deferred_event_.reset(
      event_new(base, -1, 0, &DaemonRuntime::on_deferred_event, runtime.get()));
  if (!runtime->deferred_event_) return Error{"cannot create the runtime's deferred-hook event"};
  runtime->engine_config_ = engine_config_from(params, runtime->options_.self);
  runtime->engine_ = std::make_unique<Engine>(runtime->engine_config_, *membership);
  runtime->recorder_ = FlightRecorder(params.get_size("grpcomm_flight_recorder_size"));
  runtime->recorder_.set_build(build_revision());
  // A joining daemon's recording starts with its seed (join()).
  if (!runtime->options_.joining) runtime->recorder_.start(runtime->engine_config_, size);
  runtime->awaiting_seed_ = runtime->options_.joining;
  TcpTransportConfig config;
  config.self = runtime->options_.self;
  config.secret = runtime->options_.secret;
  config.max_payload = runtime->max_payload_;
  config.worker_threads = static_cast<int>(params.get_int("runtime_num_worker_threads"));
  config.log = &log;
  auto protection = parse_frame_protection(params.get_string("rml_frame_protection"));
  if (!protection) return Error{"rml_frame_protection: " + protection.error().message};
  config.protection = *protection;
  config.send_queue_limit = params.get_size("rml_send_queue_limit");
  config.send_queue_timeout_ms =
      static_cast<std::uint32_t>(params.get_int("rml_send_queue_timeout_ms"));
  config.link_timeout_ms = static_cast<std::uint32_t>(params.get_int("rml_link_timeout_ms"));
  if (config.send_queue_limit < runtime->max_payload_) {
    return Error{"rml_send_queue_limit (" + std::to_string(config.send_queue_limit) +
                 ") is below rml_base_max_frame_size (" + std::to_string(runtime->max_payload_) +
                 "): one frame could not be queued"};
  }
  DaemonRuntime* self = runtime.get();
  TcpTransportCallbacks callbacks;
  callbacks.on_frame = [self](Vpid from, std::vector<std::byte> frame) {
    self->on_frame(from, std::move(frame));
  };
  callbacks.on_peer_lost = [self](Vpid peer) {
    if (self->hooks_.on_peer_lost) self->hooks_.on_peer_lost(peer);
  };
  auto transport = TcpTransport::create(base, std::move(config), std::move(callbacks));
  if (!transport) return transport.error();
  runtime->transport_ = std::move(*transport);
  return runtime;
}

Result<Endpoint> DaemonRuntime::listen() {
  return transport_->listen(options_.bind_host, 0);
}

Status DaemonRuntime::add_peer(Vpid vpid, const Endpoint& endpoint) {
  return transport_->add_peer(vpid, endpoint);
}

TimeNs DaemonRuntime::now() const {
  return monotonic_now_ns();
}

CountersReply DaemonRuntime::counters(std::uint64_t request) const {
  CountersReply reply;
  reply.request = request;
  reply.vpid = options_.self;
  reply.epoch = engine_->membership().epoch();
  reply.tree_version = engine_->membership().tree_version();
  reply.engine = engine_->accounting();
  reply.transport_sent = transport_->counters().sent;
  reply.transport_received = transport_->counters().received;
  reply.footprint = EngineFootprint{
      engine_->open_ops(TopologyKind::routing) + engine_->open_ops(TopologyKind::release),
      engine_->open_fences(), engine_->known_fence_signatures()};
  const MemoryUse memory = current_memory_use();
  reply.heap_bytes = memory.heap_bytes;
  reply.resident_bytes = memory.resident_bytes;
  return reply;
}

void DaemonRuntime::on_frame(Vpid from, std::vector<std::byte> frame) {
  auto header = decode_frame_header(frame, max_payload_);
  if (!header) return;  // the transport validated it; nothing else to say
  if (header->type == FrameType::control) {
    if (header->destination != options_.self) return;
    Bytes payload(frame.begin() + kFrameHeaderSize, frame.end());
    if (hooks_.heard_from) hooks_.heard_from(from);
    if (auto owner = owners_->control.find(header->tag); owner != owners_->control.end()) {
      std::shared_ptr<TagOwners::ControlHandler> handler = owner->second;
      (*handler)(from, header->tag, payload);
    } else {
      log_.verbose("daemon", 1, "unexpected control %s from %u",
                   std::string(tag_name(header->tag)).c_str(), from);
    }
    return;
  }
  if (fault_.armed() && header->type == FrameType::xcast_data && is_release_tag(header->tag)) {
    ReleaseOpKey op{header->tag, static_cast<std::uint8_t>(header->topology), header->op_id};
    if (auto fault = fault_.reached(FaultPoint::release_received, op)) {
      die_for_fault(log_, *fault, op);
    }
  }
  if (fault_.armed() && header->type == FrameType::fence_exchange) {
    // Mid-exchange, named by the round's generation. Usually this daemon
    // has contributed and sent its round 0; if the others' frames outran
    // its own start, it dies before, and the round ends participant-lost
    // everywhere instead: either way every survivor ends it alike.
    ReleaseOpKey op{header->tag, static_cast<std::uint8_t>(header->topology), header->op_id};
    if (auto fault = fault_.reached(FaultPoint::exchange_received, op)) {
      die_for_fault(log_, *fault, op);
    }
  }
  if (awaiting_seed_) {
    // Kept, never dropped: a sender that counted this daemon as reached
    // would not send again. Past the bound the join fails instead (join()
    // says so, and the daemon leaves: the DVM repairs around it).
    before_seed_bytes_ += frame.size();
    if (before_seed_bytes_ > kMaxBytesBeforeSeed) {
      if (!before_seed_.empty())
        log_.error("more than %zu bytes of frames before the join seed", kMaxBytesBeforeSeed);
      before_seed_.clear();
      return;
    }
    before_seed_.emplace_back(from, std::move(frame));
    return;
  }
  take_frame(from, std::move(frame), Caller::loop);
}

template <typename Call>
void DaemonRuntime::to_engine(FlightInputHead input, Caller caller, Call call) {
  if (!dispatching_.empty()) {
    input.parent = dispatching_.back().input + 1;
    input.at = dispatching_.back().at;
  }
  Outbox out;
  call(input, out);
  const std::uint64_t number = recorder_.inputs_total();
  recorder_.record(input, out);
  dispatching_.push_back(Dispatching{number, 0});
  drain(out, caller);
  dispatching_.pop_back();
}

void DaemonRuntime::take_frame(Vpid from, std::vector<std::byte> frame, Caller caller) {
  to_engine(
      FlightInputHead{.kind = FlightInputKind::frame, .now = now(), .peer = from, .data = frame},
      caller, [&](const FlightInputHead& input, Outbox& out) {
        engine_->on_frame(input.now, from, std::span<const std::byte>(frame), out);
      });
}

void DaemonRuntime::take_contribution(FenceRequest request, Caller caller) {
  FlightInputHead input{.kind = FlightInputKind::contribute, .now = now()};
  const bool recording = recorder_.on();
  if (recording) {
    input.text = request.signature;
    input.participants = request.participants;
    input.number = request.placed_epoch;
    input.data = request.data;
  }
  to_engine(std::move(input), caller, [&](const FlightInputHead& kept, Outbox& out) {
    // The recording views the request's bytes: the engine gets a copy then.
    if (recording) {
      engine_->contribute(kept.now, FenceRequest(request), out);
    } else {
      engine_->contribute(kept.now, std::move(request), out);
    }
  });
}

Bytes DaemonRuntime::flight_recording() const {
  // Nothing kept, or nothing to start a replay from yet (a joiner without
  // its seed): no recording.
  if (!recorder_.on() || awaiting_seed_) return {};
  return recorder_.write(build_revision(), engine_->accounting(), engine_->stats(), now());
}

void DaemonRuntime::arm_crash_dump(const std::string& dir, const std::string& who) {
  arm_fatal_signal_dump(recorder_, dir, options_.self, who);
}

void DaemonRuntime::report_problem(const std::string& text) {
  if (!recorder_.on()) return;
  if (options_.self != kControllerVpid) {
    send_control(kControllerVpid, daemon_tags::problem_seen, encode(ProblemSeen{text}));
  } else if (hooks_.on_problem) {
    hooks_.on_problem(options_.self, text);
  }
}

void DaemonRuntime::end_fence_scope(const std::string& scope) {
  to_engine(FlightInputHead{.kind = FlightInputKind::end_scope, .now = now(), .text = scope},
            Caller::owner,
            [&](const FlightInputHead&, Outbox&) { engine_->end_fence_scope(scope); });
}

Status DaemonRuntime::join(const JoinSeed& seed) {
  if (!awaiting_seed_) return Error{"this daemon has joined already"};
  if (before_seed_bytes_ > kMaxBytesBeforeSeed) {
    return Error{"more than " + std::to_string(kMaxBytesBeforeSeed) +
                 " bytes of frames arrived before the join seed; some were not kept"};
  }
  if (!seed.membership.is_alive(options_.self)) {
    return Error{"the join seed does not list vpid " + std::to_string(options_.self) +
                 " among the living"};
  }
  engine_ = std::make_unique<Engine>(engine_config_, seed);
  recorder_.start(engine_config_, 0, encode_join_seed(seed));
  awaiting_seed_ = false;
  auto waiting = std::move(before_seed_);
  before_seed_.clear();
  before_seed_bytes_ = 0;
  // The owner's call: hooks wait for the loop, as for every owner entry.
  for (auto& [from, frame] : waiting)
    take_frame(from, std::move(frame), Caller::owner);
  for (FenceRequest& request : contributions_before_seed_)
    take_contribution(std::move(request), Caller::owner);
  contributions_before_seed_.clear();
  return ok_status();
}

void DaemonRuntime::send_control(Vpid to, std::uint16_t tag, Bytes payload) {
  FrameHeader header;
  header.type = FrameType::control;
  header.tag = tag;
  header.radix = static_cast<std::uint16_t>(engine_->config().radices.routing);
  header.origin = options_.self;
  header.destination = to;
  header.sender = options_.self;
  header.tree_version = engine_->membership().tree_version();
  header.epoch = engine_->membership().epoch();
  auto status = transport_->send(to, encode_frame(header, payload), SendPath::direct);
  if (!status) {
    log_.verbose("rml", 1, "control %s to %u not sent: %s", std::string(tag_name(tag)).c_str(), to,
                 status.error().message.c_str());
  }
}

std::uint64_t DaemonRuntime::broadcast(std::uint16_t tag, const Bytes& payload) {
  std::uint64_t id = 0;
  FlightInputHead input{
      .kind = FlightInputKind::release, .now = now(), .tag = tag, .data = payload};
  to_engine(std::move(input), Caller::owner, [&](const FlightInputHead& kept, Outbox& out) {
    id = engine_->release_bcast(kept.now, tag, payload, out);
  });
  return id;
}

void DaemonRuntime::contribute(FenceRequest request) {
  if (awaiting_seed_) {
    // Its round is stamped from the seed's rounds (the joined-late rule).
    contributions_before_seed_.push_back(std::move(request));
    return;
  }
  take_contribution(std::move(request), Caller::owner);
}

void DaemonRuntime::declare_departure(Vpid vpid) {
  to_engine(FlightInputHead{.kind = FlightInputKind::departure, .now = now(), .peer = vpid},
            Caller::owner, [&](const FlightInputHead& input, Outbox& out) {
              engine_->declare_departure(input.now, vpid, out);
            });
}

bool DaemonRuntime::declare_return(Vpid vpid) {
  bool declared = false;
  to_engine(FlightInputHead{.kind = FlightInputKind::return_, .now = now(), .peer = vpid},
            Caller::owner, [&](const FlightInputHead& input, Outbox& out) {
              declared = engine_->declare_return(input.now, vpid, out);
            });
  return declared;
}

void DaemonRuntime::reach_join_fault(FaultPoint point) {
  // A daemon joins once: its one join is op 1 at each join point.
  if (!fault_.armed()) return;
  if (auto fault = fault_.reached(point, ReleaseOpKey{})) die_for_fault(log_, *fault, {});
}

void DaemonRuntime::drain(Outbox& out, Caller caller) {
#ifdef GROVE_CHECK_INVARIANTS
  // Every input's outbox comes here: the ops it touched, and the tables,
  // are checked as in the simulator. A broken invariant is a bug; the
  // daemon stops where it happened rather than carry it on.
  if (Status held = engine_->check_invariants_after_input(); !held) {
    log_.error("engine invariant broken: %s", held.error().message.c_str());
    std::abort();
  }
#endif
  if (caller == Caller::loop) run_deferred_hooks();
  for (std::size_t i = 0; i < out.mutable_effects().size(); ++i) {
    Effect& effect = out.mutable_effects()[i];
    if (!dispatching_.empty()) dispatching_.back().at = static_cast<std::uint32_t>(i + 1);
    bool immediate = std::holds_alternative<SendFrame>(effect) ||
                     std::holds_alternative<SetTimer>(effect) ||
                     std::holds_alternative<CancelTimer>(effect);
    // A hook queued behind deferred ones keeps its place in line.
    if (!immediate && (caller == Caller::owner || !deferred_hooks_.empty())) {
      deferred_hooks_.push_back(std::move(effect));
    } else {
      apply(effect);
    }
  }
  out.clear();
  if (!deferred_hooks_.empty()) event_active(deferred_event_.get(), EV_TIMEOUT, 0);
}

void DaemonRuntime::run_deferred_hooks() {
  // A hook may call back into the runtime and defer more; those run here too,
  // after the call that produced them has returned.
  while (!deferred_hooks_.empty()) {
    std::vector<Effect> batch;
    batch.swap(deferred_hooks_);
    for (Effect& effect : batch)
      apply(effect);
  }
}

void DaemonRuntime::on_deferred_event(evutil_socket_t, short, void* arg) {
  static_cast<DaemonRuntime*>(arg)->run_deferred_hooks();
}

void DaemonRuntime::send(SendFrame& send) {
  // Room for the seal's tag: appended without moving the frame.
  auto status = transport_->send(send.target, send.frame.flatten(kFrameTagSize), send.path);
  if (!status) {
    // A peer we cannot reach is a failure the controller will learn of;
    // the engine's repair covers what this frame would have carried.
    log_.verbose("rml", 1, "send to %u failed: %s", send.target, status.error().message.c_str());
  }
}

void DaemonRuntime::deliver(DeliverBroadcast& deliver) {
  if (is_release_tag(deliver.tag) && log_.enabled("grpcomm", 1)) {
    // Every daemon logs what it was released with, so a test (or a user)
    // can check that all of them got identical bytes.
    log_.verbose("grpcomm", 1, "%s %s op %llu: %zu bytes, digest %016llx",
                 std::string(tag_name(deliver.tag)).c_str(),
                 std::string(topology_name(deliver.topology)).c_str(),
                 static_cast<unsigned long long>(deliver.op_id), deliver.payload->size(),
                 static_cast<unsigned long long>(fnv1a64(*deliver.payload)));
  }
  if (fault_.armed() && is_release_tag(deliver.tag)) {
    ReleaseOpKey op{deliver.tag, static_cast<std::uint8_t>(deliver.topology), deliver.op_id};
    if (auto fault = fault_.reached(FaultPoint::release_delivered, op)) {
      die_for_fault(log_, *fault, op);
    }
  }
  if (auto owner = owners_->broadcasts.find(deliver.tag); owner != owners_->broadcasts.end()) {
    std::shared_ptr<TagOwners::BroadcastHandler> handler = owner->second;
    (*handler)(deliver);
  } else {
    log_.verbose("daemon", 2, "a broadcast nobody here owns: %s",
                 std::string(tag_name(deliver.tag)).c_str());
  }
}

void DaemonRuntime::fence_done(FenceDone& fence) {
  log_.verbose("daemon", 2, "fence '%s' round %llu ended: %s", fence.key.signature.c_str(),
               static_cast<unsigned long long>(fence.key.generation),
               std::string(fence_status_name(fence.status)).c_str());
  if (fence.release && log_.enabled("grpcomm", 1)) {
    // As for releases: every daemon logs what the round ended with, so a
    // test (or a user) can check that all of them hold identical bytes.
    log_.verbose("grpcomm", 1, "fence '%s' round %llu ended %s: %zu bytes, digest %016llx",
                 fence.key.signature.c_str(), static_cast<unsigned long long>(fence.key.generation),
                 std::string(fence_status_name(fence.status)).c_str(), fence.release->size(),
                 static_cast<unsigned long long>(fnv1a64(*fence.release)));
  } else if (log_.enabled("grpcomm", 1)) {
    log_.verbose("grpcomm", 1, "fence '%s' round %llu ended %s (lost vpid %u)",
                 fence.key.signature.c_str(), static_cast<unsigned long long>(fence.key.generation),
                 std::string(fence_status_name(fence.status)).c_str(), fence.lost);
  }
  // Scopes do not nest: the first that names the signature owns it.
  for (const auto& [scope, handler] : owners_->fences) {
    if (!fence.key.signature.starts_with(scope)) continue;
    std::shared_ptr<TagOwners::FenceHandler> owner = handler;
    (*owner)(fence);
    return;
  }
}

void DaemonRuntime::broadcast_done(BroadcastDone& done) {
  if (timing_) {
    // The timing census: one line per broadcast, with its size and tag,
    // so releases of different sizes are never averaged together.
    log_.verbose("grpcomm", 0,
                 "timing %s %s op %llu: %llu bytes on the wire, started %llu ns, "
                 "completed %llu ns, span %.1f us%s",
                 std::string(tag_name(done.tag)).c_str(),
                 std::string(topology_name(done.topology)).c_str(),
                 static_cast<unsigned long long>(done.op_id),
                 static_cast<unsigned long long>(done.wire_bytes),
                 static_cast<unsigned long long>(done.started_ns),
                 static_cast<unsigned long long>(done.completed_ns),
                 static_cast<double>(done.completed_ns - done.started_ns) / 1000.0,
                 done.ok ? "" : " (ended in error)");
  }
  if (hooks_.on_broadcast_done) hooks_.on_broadcast_done(done);
}

void DaemonRuntime::set_timer(SetTimer& timer) {
  arm_timer(timer.id, timer.deadline_ns);
}

void DaemonRuntime::cancel_timer(CancelTimer& cancel) {
  timers_.erase(cancel.id);
}

void DaemonRuntime::show_help(ShowHelpTopic& help) {
  if (hooks_.on_help) hooks_.on_help(help);
}

void DaemonRuntime::membership_changed(MembershipChanged& changed) {
  log_.verbose("grpcomm", 1, "adopted epoch %llu, tree version %llu, %zu failed",
               static_cast<unsigned long long>(changed.epoch),
               static_cast<unsigned long long>(changed.tree_version), changed.failed.size());
  if (hooks_.on_membership) hooks_.on_membership(changed);
}

void DaemonRuntime::arm_timer(const TimerId& id, TimeNs deadline_ns) {
  auto pending = std::make_unique<PendingTimer>();
  pending->runtime = this;
  pending->id = id;
  pending->event.reset(evtimer_new(base_, &DaemonRuntime::on_timer_event, pending.get()));
  TimeNs now_ns = now();
  TimeNs wait_ns = deadline_ns > now_ns ? deadline_ns - now_ns : 0;
  timeval delay{static_cast<time_t>(wait_ns / 1'000'000'000ULL),
                static_cast<suseconds_t>((wait_ns % 1'000'000'000ULL) / 1000)};
  evtimer_add(pending->event.get(), &delay);
  timers_[id] = std::move(pending);
}

void DaemonRuntime::on_timer_event(evutil_socket_t, short, void* arg) {
  auto* pending = static_cast<PendingTimer*>(arg);
  DaemonRuntime* runtime = pending->runtime;
  TimerId id = pending->id;
  runtime->timers_.erase(id);  // frees `pending`; nothing of it is used after this
  runtime->to_engine(FlightInputHead{.kind = FlightInputKind::timer,
                                     .now = runtime->now(),
                                     .timer_kind = static_cast<std::uint8_t>(id.kind),
                                     .timer_topology = static_cast<std::uint8_t>(id.topology),
                                     .number = id.op_id},
                     Caller::loop, [runtime, id](const FlightInputHead& input, Outbox& out) {
                       runtime->engine_->on_timer(input.now, id, out);
                     });
}

}  // namespace grove
