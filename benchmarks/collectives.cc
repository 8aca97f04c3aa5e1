// Benchmark (not a test): communication accounting of one fence, as facts.
// For each daemon count, radix pair, release topology and payload, one
// simulated fence with no faults and no jitter: the frames and bytes of every
// kind (frame type, tag, topology) in total and at the busiest daemon, and the
// controller's release fanout. Then the same fences with one daemon killed
// while it holds the release (an interior node of the release's tree): the
// frames the repair adds.
//
// SimResult gives per-kind totals and per-daemon totals but not per-daemon
// per-kind counts. Without faults the trees dictate those (a data frame per
// child on the release's tree, one acknowledgement and one rollup per
// non-root daemon); they are derived from the trees, checked against every
// daemon's total, and the rollup's bytes are each daemon's remainder.
// Usage: bench_collectives [RESULT.json]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "grpcomm/tags.h"
#include "rml/membership.h"
#include "rml/topology.h"
#include "rml/tree.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"

using namespace grove;

namespace {

constexpr std::uint32_t kDaemonCounts[] = {2, 10, 64, 257, 1000};
constexpr TopologyRadices kRadixPairs[] = {{64, 4}, {64, 2}, {2, 2}, {4, 4}};
constexpr std::uint64_t kPayloads[] = {0, 10'000, 1'000'000};
constexpr TimeNs kReleaseDelayNs = 150'000;
constexpr std::uint64_t kFaultSeeds = 8;  // seeds the repair's extra frames are ranged over

struct Cell {
  std::uint32_t daemons = 2;
  TopologyRadices radices;
  bool low_radix_release = true;
  std::uint64_t payload_bytes = 0;
};

SimOptions options_for(const Cell& cell, std::uint64_t seed) {
  SimOptions options;
  options.daemons = cell.daemons;
  options.radices = cell.radices;
  options.low_radix_release = cell.low_radix_release;
  options.payload_bytes = cell.payload_bytes;
  options.rounds = 1;
  options.network.jitter = 0.0;
  options.seed = seed;
  options.trace_lines = 0;
  return options;
}

// The tree a fence release travels in this cell.
Tree release_tree(const Cell& cell) {
  std::vector<Vpid> vpids(cell.daemons);
  for (Vpid vpid = 0; vpid < cell.daemons; ++vpid)
    vpids[vpid] = vpid;
  TopologyKind kind = topology_for_tag(tags::fence_release, cell.low_radix_release);
  return derive_topology(*Membership::create(vpids), kind, cell.radices);
}

std::string kind_label(const TrafficKey& key) {
  return std::string(frame_type_name(key.type)) + "/" + std::string(tag_name(key.tag)) + "/" +
         std::string(topology_name(key.topology));
}

nlohmann::json key_json(const TrafficKey& key) {
  return {{"type", std::string(frame_type_name(key.type))},
          {"tag", std::string(tag_name(key.tag))},
          {"topology", std::string(topology_name(key.topology))}};
}

SimResult run_or_die(const SimOptions& options) {
  SimResult result = run_simulation(options);
  if (!result.ok) {
    std::fprintf(stderr, "run failed: %s\nreplay: %s\n", result.violation.c_str(),
                 replay_command(options).c_str());
    std::exit(1);
  }
  return result;
}

// Per-daemon per-kind maxima of a fault-free fence, derived from the trees and
// checked against SimResult::per_daemon; nullopt when the counts do not fit.
std::optional<std::map<TrafficKey, TrafficCount>> busiest_by_kind(const Cell& cell,
                                                                  const SimResult& result) {
  const TopologyKind kind = topology_for_tag(tags::fence_release, cell.low_radix_release);
  const TrafficKey data{FrameType::xcast_data, tags::fence_release, kind};
  const TrafficKey ack{FrameType::xcast_ack, tags::fence_release, kind};
  const TrafficKey rollup{FrameType::fence_rollup, tags::fence_rollup, TopologyKind::routing};
  const auto& by_key = result.traffic.by_key();
  for (const auto& [key, count] : by_key) {
    if (key != data && key != ack && key != rollup) return std::nullopt;
  }
  auto frame_size = [&](const TrafficKey& key) -> std::uint64_t {
    auto found = by_key.find(key);
    return found == by_key.end() || found->second.frames == 0
               ? 0
               : found->second.bytes / found->second.frames;
  };
  const std::uint64_t data_bytes = frame_size(data);
  const std::uint64_t ack_bytes = frame_size(ack);
  const Tree tree = release_tree(cell);
  std::map<TrafficKey, TrafficCount> busiest;
  std::map<TrafficKey, TrafficCount> sum;
  for (Vpid vpid = 0; vpid < cell.daemons; ++vpid) {
    const TrafficCount& sent = result.per_daemon[vpid];
    const std::uint64_t children = tree.children(vpid).size();
    const std::uint64_t upward = vpid == kControllerVpid ? 0 : 1;  // one ack, one rollup
    if (sent.frames != children + 2 * upward) return std::nullopt;
    const std::uint64_t known_bytes = children * data_bytes + upward * ack_bytes;
    if (sent.bytes < known_bytes) return std::nullopt;
    const TrafficCount mine[] = {{children, children * data_bytes},
                                 {upward, upward * ack_bytes},
                                 {upward, sent.bytes - known_bytes}};
    const TrafficKey keys[] = {data, ack, rollup};
    for (int i = 0; i < 3; ++i) {
      TrafficCount& top = busiest[keys[i]];
      top.frames = std::max(top.frames, mine[i].frames);
      top.bytes = std::max(top.bytes, mine[i].bytes);
      sum[keys[i]] += mine[i];
    }
  }
  for (const auto& [key, count] : sum) {
    auto found = by_key.find(key);
    TrafficCount counted = found == by_key.end() ? TrafficCount{} : found->second;
    if (!(counted == count)) return std::nullopt;
  }
  return busiest;
}

TrafficCount busiest_daemon(const SimResult& result) {
  TrafficCount top;
  for (const TrafficCount& sent : result.per_daemon) {
    top.frames = std::max(top.frames, sent.frames);
    top.bytes = std::max(top.bytes, sent.bytes);
  }
  return top;
}

nlohmann::json cell_json(const Cell& cell) {
  return {
      {"daemons", cell.daemons},
      {"routing_radix", cell.radices.routing},
      {"release_radix", cell.radices.release},
      {"low_radix_release", cell.low_radix_release},
      {"payload_bytes", cell.payload_bytes},
      {"release_topology",
       std::string(topology_name(topology_for_tag(tags::fence_release, cell.low_radix_release)))}};
}

void print_cell_prefix(const Cell& cell) {
  std::printf("%5u %3u/%-3u %-3s %8llu ", cell.daemons, cell.radices.routing, cell.radices.release,
              cell.low_radix_release ? "on" : "off",
              static_cast<unsigned long long>(cell.payload_bytes));
}

// Whether two seeds gave the same count of one kind (frames never depend on
// the seed; bytes do when a release of random contributions is deflated).
bool same_in(const SimResult& other, const TrafficKey& key, const TrafficCount& count) {
  auto found = other.traffic.by_key().find(key);
  return found != other.traffic.by_key().end() && found->second == count;
}

bool same_frames(const SimResult& one, const SimResult& other) {
  if (one.per_daemon.size() != other.per_daemon.size()) return false;
  for (std::size_t i = 0; i < one.per_daemon.size(); ++i) {
    if (one.per_daemon[i].frames != other.per_daemon[i].frames) return false;
  }
  for (const auto& [key, count] : one.traffic.by_key()) {
    auto found = other.traffic.by_key().find(key);
    if (found == other.traffic.by_key().end() || found->second.frames != count.frames) {
      return false;
    }
  }
  return one.traffic.by_key().size() == other.traffic.by_key().size();
}

nlohmann::json no_fault_row(const Cell& cell) {
  const SimResult result = run_or_die(options_for(cell, 1));
  const SimResult again = run_or_die(options_for(cell, 2));
  const auto busiest = busiest_by_kind(cell, result);
  const TrafficCount top = busiest_daemon(result);
  const std::uint64_t controller_frames = result.per_daemon[kControllerVpid].frames;
  nlohmann::json row = cell_json(cell);
  row["frames_seed_independent"] = same_frames(result, again);
  row["per_daemon_by_kind"] = busiest ? "derived from the trees, checked" : "unavailable";
  // Without faults the controller sends release data frames and nothing else
  // (checked by the derivation), so its total is its release fanout.
  row["controller_release_fanout"] = controller_frames;
  row["controller_children_in_release_tree"] = release_tree(cell).children(kControllerVpid).size();
  row["total"] = {{"frames", result.traffic.total().frames},
                  {"bytes", result.traffic.total().bytes}};
  row["busiest_daemon"] = {{"frames", top.frames}, {"bytes", top.bytes}};
  row["release_span_us"] = static_cast<double>(result.release_span_ns.at(0)) / 1000.0;
  row["events"] = result.events;
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& [key, count] : result.traffic.by_key()) {
    const bool seed_independent = same_in(again, key, count);
    nlohmann::json kind = key_json(key);
    kind["frames"] = count.frames;
    kind["bytes"] = count.bytes;
    kind["max_daemon_frames"] = busiest ? nlohmann::json(busiest->at(key).frames) : nullptr;
    kind["max_daemon_bytes"] = busiest ? nlohmann::json(busiest->at(key).bytes) : nullptr;
    kind["seed_independent"] = seed_independent;
    kinds.push_back(kind);
    print_cell_prefix(cell);
    std::printf("%-36s %6llu %12llu %6s %12s %5llu%s\n", kind_label(key).c_str(),
                static_cast<unsigned long long>(count.frames),
                static_cast<unsigned long long>(count.bytes),
                busiest ? std::to_string(busiest->at(key).frames).c_str() : "?",
                busiest ? std::to_string(busiest->at(key).bytes).c_str() : "?",
                static_cast<unsigned long long>(controller_frames), seed_independent ? "" : "  *");
  }
  row["kinds"] = kinds;
  return row;
}

// The first child of the root that has children of its own, on the tree the
// release travels: killing it while it holds the release orphans a subtree.
std::optional<Vpid> interior_victim(const Cell& cell) {
  const Tree tree = release_tree(cell);
  for (Vpid child : tree.children(kControllerVpid)) {
    if (!tree.children(child).empty()) return child;
  }
  return std::nullopt;
}

SimOptions fault_options(const Cell& cell, Vpid victim, std::uint64_t seed, bool with_fault) {
  SimOptions options = options_for(cell, seed);
  options.release_delay_ns = kReleaseDelayNs;
  options.release_delay_target = victim;  // only the victim holds; it dies holding
  if (with_fault) options.faults = {FaultSpec{victim, FaultKind::while_holding, 0, 1}};
  return options;
}

nlohmann::json extra_kinds(const SimResult& baseline, const SimResult& faulted) {
  std::map<TrafficKey, std::pair<TrafficCount, TrafficCount>> merged;
  for (const auto& [key, count] : baseline.traffic.by_key())
    merged[key].first = count;
  for (const auto& [key, count] : faulted.traffic.by_key())
    merged[key].second = count;
  nlohmann::json kinds = nlohmann::json::array();
  for (const auto& [key, counts] : merged) {
    nlohmann::json kind = key_json(key);
    kind["baseline_frames"] = counts.first.frames;
    kind["baseline_bytes"] = counts.first.bytes;
    kind["fault_frames"] = counts.second.frames;
    kind["fault_bytes"] = counts.second.bytes;
    kind["extra_frames"] = static_cast<std::int64_t>(counts.second.frames) -
                           static_cast<std::int64_t>(counts.first.frames);
    kind["extra_bytes"] = static_cast<std::int64_t>(counts.second.bytes) -
                          static_cast<std::int64_t>(counts.first.bytes);
    kinds.push_back(kind);
  }
  return kinds;
}

std::int64_t extra_frames(const SimResult& baseline, const SimResult& faulted) {
  return static_cast<std::int64_t>(faulted.traffic.total().frames) -
         static_cast<std::int64_t>(baseline.traffic.total().frames);
}

nlohmann::json one_fault_row(const Cell& cell) {
  const std::optional<Vpid> victim = interior_victim(cell);
  if (!victim) {
    print_cell_prefix(cell);
    std::printf("%6s (the release's tree is one level: no interior node)\n", "-");
    nlohmann::json row = cell_json(cell);
    row["victim"] = nullptr;
    row["skipped"] = "the release's tree has no interior node";
    return row;
  }
  const SimResult baseline = run_or_die(fault_options(cell, *victim, 1, false));
  const SimResult faulted = run_or_die(fault_options(cell, *victim, 1, true));
  // The controller learns of the death after a seeded delay; the repair's
  // cost depends on what is in flight by then, so range it over seeds.
  std::int64_t fewest = extra_frames(baseline, faulted);
  std::int64_t most = fewest;
  for (std::uint64_t seed = 2; seed <= kFaultSeeds; ++seed) {
    const SimResult other = run_or_die(fault_options(cell, *victim, seed, true));
    fewest = std::min(fewest, extra_frames(baseline, other));
    most = std::max(most, extra_frames(baseline, other));
  }
  const std::int64_t frames = extra_frames(baseline, faulted);
  const std::int64_t bytes = static_cast<std::int64_t>(faulted.traffic.total().bytes) -
                             static_cast<std::int64_t>(baseline.traffic.total().bytes);
  nlohmann::json row = cell_json(cell);
  row["victim"] = *victim;
  row["fault"] = "while_holding";
  row["release_delay_us"] = kReleaseDelayNs / 1000;
  row["killed"] = faulted.killed;
  row["rounds_failed"] = faulted.rounds_failed;
  row["replays"] = faulted.replays;
  row["parked"] = faulted.parked;
  row["rollup_resends"] = faulted.rollup_resends;
  row["extra"] = {{"frames", frames}, {"bytes", bytes}};
  row["extra_frames_over_seeds"] = {{"seeds", kFaultSeeds}, {"min", fewest}, {"max", most}};
  row["kinds"] = extra_kinds(baseline, faulted);
  print_cell_prefix(cell);
  std::printf("%6u %7lld %12lld %7lld..%-5lld %7llu %6llu\n", *victim,
              static_cast<long long>(frames), static_cast<long long>(bytes),
              static_cast<long long>(fewest), static_cast<long long>(most),
              static_cast<unsigned long long>(faulted.replays),
              static_cast<unsigned long long>(faulted.parked));
  return row;
}

std::vector<Cell> all_cells() {
  std::vector<Cell> cells;
  for (std::uint32_t daemons : kDaemonCounts) {
    for (const TopologyRadices& radices : kRadixPairs) {
      for (bool low : {true, false}) {
        for (std::uint64_t payload : kPayloads)
          cells.push_back({daemons, radices, low, payload});
      }
    }
  }
  return cells;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Cell> cells = all_cells();
  std::printf(
      "one fence, no faults, jitter 0 (max/d: the busiest daemon; ctl: the controller's"
      " release fanout;\n * bytes differ under another seed: the release of random"
      " contributions was deflated)\n");
  std::printf("%5s %7s %-3s %8s %-36s %6s %12s %6s %12s %5s\n", "N", "radices", "low", "payload",
              "kind", "frames", "bytes", "max/d", "max/d bytes", "ctl");
  nlohmann::json no_fault = nlohmann::json::array();
  for (const Cell& cell : cells)
    no_fault.push_back(no_fault_row(cell));

  std::printf(
      "\none fence, one interior node of the release's tree killed while holding it"
      " (extra = faulted - fault-free)\n");
  std::printf("%5s %7s %-3s %8s %6s %7s %12s %14s %7s %6s\n", "N", "radices", "low", "payload",
              "victim", "+frames", "+bytes", "+frames/seeds", "replays", "parked");
  nlohmann::json one_fault = nlohmann::json::array();
  for (const Cell& cell : cells) {
    if (cell.daemons > 2) one_fault.push_back(one_fault_row(cell));
  }
  if (argc > 1) {
    nlohmann::json setup = {{"rounds", 1},
                            {"jitter", 0.0},
                            {"participant_fraction", 1.0},
                            {"seed", 1},
                            {"fault_seeds", kFaultSeeds},
                            {"release_delay_us", kReleaseDelayNs / 1000}};
    std::ofstream(argv[1]) << nlohmann::json{{"benchmark", "collectives"},
                                             {"setup", setup},
                                             {"no_fault", no_fault},
                                             {"one_fault", one_fault}}
                                  .dump(2)
                           << "\n";
  }
  return 0;
}
