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

namespace grove {

// A daemon's first words to the controller.
struct DaemonReport {
  Vpid vpid = 0;
  std::string endpoint;  // host:port it listens on
  std::string hostname;
  std::uint32_t cores = 0;
  std::uint32_t pid = 0;
};

// The controller's broadcast once every daemon reported.
struct EndpointTable {
  std::vector<DaemonReport> daemons;
};

// What a daemon's engine holds now: a long-lived DVM must not grow per job.
struct EngineFootprint {
  std::uint64_t ops = 0;               // xcast ops held, both topologies
  std::uint64_t open_fences = 0;       // fence rounds waiting for contributions
  std::uint64_t fence_signatures = 0;  // signatures whose last round is remembered
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
};

// Start one round of the barrier benchmark: every daemon contributes nothing.
struct BenchBarrier {
  std::string signature;
  VpidSet participants;
};

// A daemon could not start one it was to start (tree spawn), and why.
struct LaunchFailure {
  Vpid vpid = 0;
  std::string reason;
};

Bytes encode(const DaemonReport& report);
Bytes encode(const LaunchFailure& failure);
Bytes encode(const EndpointTable& table);
Bytes encode(const CountersReply& reply);
Bytes encode(const ShowHelpTopic& help);
Bytes encode(const BenchBarrier& bench);
Bytes encode_u64(std::uint64_t value);

Result<DaemonReport> decode_daemon_report(std::span<const std::byte> payload);
Result<LaunchFailure> decode_launch_failure(std::span<const std::byte> payload);
Result<EndpointTable> decode_endpoint_table(std::span<const std::byte> payload);
Result<CountersReply> decode_counters_reply(std::span<const std::byte> payload);
Result<ShowHelpTopic> decode_help(std::span<const std::byte> payload);
Result<BenchBarrier> decode_bench_barrier(std::span<const std::byte> payload);
Result<std::uint64_t> decode_u64(std::span<const std::byte> payload);

}  // namespace grove
