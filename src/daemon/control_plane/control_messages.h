// Messages between daemons and the controller that are not collectives:
// startup reports, the endpoint table, heartbeats, status gathering,
// forwarded help topics, shutdown and the benchmark driver. Each has a tag of
// its own above grpcomm's. Point-to-point ones travel as control frames
// straight to the controller; DVM-wide ones are engine broadcasts on the
// routing tree, so they inherit its reliability and repair.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grpcomm/effects.h"
#include "grpcomm/tags.h"
#include "rml/traffic.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"
#include "util/result.h"
#include "util/wire.h"

namespace grove {

// Each message lists its fields once (wire_fields); util/wire.h derives
// `encode(message)` and `wire_decode<Message>(payload)` from that list.

// A daemon's first words to the controller.
struct DaemonReport {
  Vpid vpid = 0;
  std::string endpoint;  // host:port it listens on
  std::string hostname;
  std::uint32_t cores = 0;
  std::uint32_t pid = 0;
  // Its hwloc topology came from the controller's export (a daemon on the
  // controller's host), not from discovering the host itself.
  bool topology_imported = false;
  std::uint32_t packages = 1;    // sockets, for --map-by ppr:N:socket
  std::uint64_t open_files = 0;  // its soft limit on open descriptors (0: unknown)

  static constexpr const char* wire_name = "report";
  static auto wire_fields(auto& m) {
    return std::tie(m.vpid, m.endpoint, m.hostname, m.cores, m.pid, m.topology_imported, m.packages,
                    m.open_files);
  }
};

// The controller's broadcast once every daemon reported.
struct EndpointTable {
  std::vector<DaemonReport> daemons;

  static constexpr const char* wire_name = "endpoint table";
  static auto wire_fields(auto& m) { return std::tie(m.daemons); }
};

// daemon_tags::welcome to a daemon grown into a running DVM: every daemon's
// endpoint, and its engine's seed (grpcomm/join_seed.h, encoded).
struct JoinWelcome {
  EndpointTable table;
  Bytes seed;

  static constexpr const char* wire_name = "join welcome";
  static auto wire_fields(auto& m) { return std::tie(m.table, m.seed); }
};

// What a daemon's engine holds now: a long-lived DVM must not grow per job.
struct EngineFootprint {
  std::uint64_t ops = 0;               // xcast ops held, both topologies
  std::uint64_t open_fences = 0;       // fence rounds waiting for contributions
  std::uint64_t fence_signatures = 0;  // signatures whose last round is remembered

  static constexpr const char* wire_name = "engine footprint";
  static auto wire_fields(auto& m) { return std::tie(m.ops, m.open_fences, m.fence_signatures); }
};

// How often a daemon woke for its work: its loop's passes, and the
// hand-overs between libpmix's thread and the loop (docs/benchmarks.md,
// fence_wakeups.py).
struct WakeCounts {
  std::uint64_t loop_passes = 0;
  std::uint64_t pmix_upcalls = 0;       // libpmix's thread to the loop: messages
  std::uint64_t pmix_upcall_wakes = 0;  // ... of them, those that woke the loop
  std::uint64_t pmix_answers = 0;       // the loop to libpmix's thread

  static constexpr const char* wire_name = "wake counts";
  static auto wire_fields(auto& m) {
    return std::tie(m.loop_passes, m.pmix_upcalls, m.pmix_upcall_wakes, m.pmix_answers);
  }
};

// A daemon's counters for `grove status`.
struct CountersReply {
  std::uint64_t request = 0;
  Vpid vpid = 0;
  std::uint64_t epoch = 0;
  std::uint64_t tree_version = 0;
  Accounting engine;  // frames the engine emitted
  Accounting transport_sent;
  Accounting transport_received;
  EngineFootprint footprint;
  // Round trip of this daemon's last answered heartbeat to the controller
  // (0: none yet, or the controller itself).
  std::uint64_t controller_rtt_ns = 0;
  std::uint64_t heap_bytes = 0;      // malloc'd and not freed, libpmix's included
  std::uint64_t resident_bytes = 0;  // the daemon's resident set
  WakeCounts wakes;
  Bytes flight;  // the engine's flight recording, when asked for

  static constexpr const char* wire_name = "counters reply";
  static auto wire_fields(auto& m) {
    return std::tie(m.request, m.vpid, m.epoch, m.tree_version, m.engine, m.transport_sent,
                    m.transport_received, m.footprint, m.controller_rtt_ns, m.heap_bytes,
                    m.resident_bytes, m.wakes, m.flight);
  }
};

// The barrier benchmark's fence, on every daemon. Its releases are acked at
// once (EngineConfig::prompt_ack_signature): a round starts when the last
// one's release is complete everywhere.
inline constexpr const char* kBenchBarrierSignature = "bench-barrier";

// Start one round of the barrier benchmark: every daemon contributes nothing.
struct BenchBarrier {
  std::string signature;
  VpidSet participants;
  std::uint64_t share = 0;  // bytes each daemon contributes (grove bench barrier --size / N)
  std::uint64_t round = 0;  // seeds the contributions' bytes

  static constexpr const char* wire_name = "bench";
  static auto wire_fields(auto& m) {
    return std::tie(m.signature, m.participants, m.share, m.round);
  }
};

// A daemon's contribution to a bench barrier round: `share` bytes drawn from
// (round, vpid) by splitmix64, so every daemon's differs and a digest checks
// them all; incompressible, like a modex of keys and addresses mostly is not.
inline Bytes bench_contribution(const BenchBarrier& round, Vpid vpid) {
  Bytes out(round.share);
  std::uint64_t state = round.round * 0x9E3779B97F4A7C15ULL ^ (std::uint64_t{vpid} << 32);
  std::uint64_t bits = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i % 8 == 0) {
      std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      bits = z ^ (z >> 31);
    }
    out[i] = static_cast<std::byte>(bits & 0xFF);
    bits >>= 8;
  }
  return out;
}

// A daemon could not start one it was to start (tree spawn), and why.
struct LaunchFailure {
  Vpid vpid = 0;
  std::string reason;

  static constexpr const char* wire_name = "launch failure";
  static auto wire_fields(auto& m) { return std::tie(m.vpid, m.reason); }
};

// A daemon lost its connection with a peer that is still a member (a link
// that failed or timed out, or a peer that could not be dialled). Frames
// queued on that link are gone, so the controller must end the peer's
// membership for the trees to route around it (docs/transport.md).
struct LinkLost {
  Vpid peer = 0;

  static constexpr const char* wire_name = "link lost";
  static auto wire_fields(auto& m) { return std::tie(m.peer); }
};

// The controller to a daemon it declared lost that may still be running (a
// partitioned or hung one): leave the DVM, and why.
struct Eviction {
  std::string reason;

  static constexpr const char* wire_name = "eviction";
  static auto wire_fields(auto& m) { return std::tie(m.reason); }
};

// A daemon's heartbeat, and the controller's answer (the same bytes back).
struct Heartbeat {
  std::uint64_t sent_ns = 0;  // on the daemon's clock

  static constexpr const char* wire_name = "heartbeat";
  static auto wire_fields(auto& m) { return std::tie(m.sent_ns); }
};

// A daemon saw a problem the DVM keeps its flight recordings of (a fence
// past its PMIX_TIMEOUT): the controller dumps them (docs/simulator.md).
struct ProblemSeen {
  std::string text;

  static constexpr const char* wire_name = "problem seen";
  static auto wire_fields(auto& m) { return std::tie(m.text); }
};

// The controller asks every daemon for its counters (`grove status`).
struct CountersRequest {
  std::uint64_t request = 0;
  bool flight = false;  // with the flight recording (`grove status --dump`)

  static constexpr const char* wire_name = "counters request";
  static auto wire_fields(auto& m) { return std::tie(m.request, m.flight); }
};

}  // namespace grove
