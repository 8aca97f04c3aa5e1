// libFuzzer target for the collective engine (grpcomm/engine.h): the input is
// a script of inputs to one engine of an 8-daemon DVM (the controller or a
// relay, chosen by the first byte): frames with well-formed headers whose
// fields and payloads are the fuzzer's, release-hold timers, departures and
// contributions. After every input the engine's own invariants must hold
// (check_invariants) and nothing may crash or leak. Built and run by .ci/fuzz.
//
// With -DGROVE_FUZZ_CANARY the harness plants a bug: delivering op 13 of the
// release tree aborts. .ci/fuzz runs that build too, from a seed that
// delivers op 1 of the routing tree, and fails unless the fuzzer finds it:
// proof that it reaches deliveries and varies what it delivers there.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <span>
#include <variant>

#include "grpcomm/engine.h"
#include "grpcomm/tags.h"

namespace {

using namespace grove;

class Script {
 public:
  explicit Script(std::span<const std::uint8_t> bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  std::uint8_t u8() { return done() ? 0 : bytes_[at_++]; }
  std::uint64_t small() { return u8() % 16; }
  std::span<const std::byte> blob(std::size_t length) {
    length = std::min(length, bytes_.size() - std::min(at_, bytes_.size()));
    auto out = std::as_bytes(bytes_.subspan(at_, length));
    at_ += length;
    return out;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t at_ = 0;
};

constexpr std::uint16_t kTags[] = {tags::membership,    tags::fence_rollup,  tags::fence_release,
                                   tags::group_release, tags::op_report,     tags::op_abort,
                                   tags::launch,        tags::bench_release, tags::fence_exchange};

void check(const grove::Status& status) {
  if (!status) {
    std::fprintf(stderr, "engine fuzzer: invariant broken: %s\n", status.error().message.c_str());
    std::abort();
  }
}

void inspect(grove::Outbox& out) {
#ifdef GROVE_FUZZ_CANARY
  for (const grove::Effect& effect : out.effects()) {
    if (const auto* deliver = std::get_if<grove::DeliverBroadcast>(&effect)) {
      if (deliver->topology == grove::TopologyKind::release && deliver->op_id == 13) {
        std::fprintf(stderr, "engine fuzzer: canary found (release op 13 delivered)\n");
        std::abort();
      }
    }
  }
#endif
  out.clear();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Script script(std::span<const std::uint8_t>(data, size));
  std::vector<Vpid> daemons = {0, 1, 2, 3, 4, 5, 6, 7};
  auto membership = Membership::create(daemons);
  if (!membership) std::abort();
  EngineConfig config;
  config.self = script.u8() % 2 == 0 ? 0 : 1 + script.u8() % 7;
  config.radices = {2u + script.u8() % 3, 2u + script.u8() % 2};
  config.release_delay_ns = script.u8() % 2 == 0 ? 0 : 1000;
  config.max_payload = 1 << 16;
  // Fences as Bruck exchanges in half the inputs, by length (no byte of the
  // script is taken, so the corpus reads as before).
  config.fence_topology = size % 2 == 0 ? FenceTopology::tree : FenceTopology::bruck;
  Engine engine(config, *membership);
  Outbox out;
  TimeNs now = 1;
  while (!script.done()) {
    now += 10;
    switch (script.u8() % 8) {
      case 0: {  // the controller's input: a broadcast or a departure
        if (!engine.is_controller()) break;
        if (script.u8() % 4 == 0) {
          engine.declare_departure(now, 1 + script.u8() % 7, out);
        } else {
          auto payload = script.blob(script.u8());
          engine.release_bcast(now, kTags[script.u8() % std::size(kTags)], payload, out);
        }
        break;
      }
      case 1: {  // a contribution to a fence among some daemons
        FenceRequest request;
        request.signature = "f" + std::to_string(script.u8() % 3);
        std::uint8_t members = script.u8();
        for (Vpid vpid = 0; vpid < 8; ++vpid) {
          if (members & (1u << vpid)) request.participants.insert(vpid);
        }
        auto data_bytes = script.blob(script.u8() % 32);
        request.data.assign(data_bytes.begin(), data_bytes.end());
        engine.contribute(now, request, out);
        break;
      }
      case 2:  // a release hold expires
        engine.on_timer(now,
                        TimerId{TimerKind::release_hold,
                                script.u8() % 2 ? TopologyKind::release : TopologyKind::routing,
                                script.small()},
                        out);
        break;
      default: {  // a frame from a peer, well-formed header, fuzzed fields
        FrameHeader header;
        header.type = static_cast<FrameType>(1 + script.u8() % kFrameTypeMax);
        header.tag = kTags[script.u8() % std::size(kTags)];
        header.topology = static_cast<TopologyKind>(script.u8() % 3);  // routing, release, bruck
        header.radix = static_cast<std::uint16_t>(2 + script.u8() % 3);
        header.op_id = script.small();
        header.sender = script.u8() % 8;
        header.origin = script.u8() % 2 ? 0 : header.sender;
        header.destination = script.u8() % 8;
        header.tree_version = script.small() % 4;
        header.epoch = script.small() % 4;
        header.watermark = script.small();
        auto payload = script.blob(script.u8());
        engine.on_frame(now, header.sender, encode_frame(header, payload), out);
        break;
      }
    }
    inspect(out);
    check(engine.check_invariants());
  }
  return 0;
}
