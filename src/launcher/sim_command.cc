// grove sim: run the collective engine over the simulated network, with
// faults, and report completion times, traffic and any invariant violation
// together with the command line that replays it.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "grpcomm/tags.h"
#include "launcher/commands.h"
#include "launcher/sim_huge_pages.h"
#include "launcher/sim_progress.h"
#include "launcher/sim_replay.h"
#include "sim/replay_line.h"
#include "sim/simulator.h"
#include "util/text.h"

namespace grove {
namespace {

struct SimCliOptions {
  std::uint32_t daemons = 64;
  std::string payload = "1024";
  std::int64_t radix = 0;
  std::int64_t radix2 = 0;
  std::string low_radix_release;
  std::string fence_topology;
  std::uint32_t faults = 0;
  std::uint32_t returns = 0;
  std::uint32_t joins = 0;
  std::uint64_t seed = 1;
  std::uint32_t runs = 1;
  std::uint32_t rounds = 1;
  std::uint64_t release_delay_us = 0;
  std::int64_t release_delay_target = -1;
  std::uint64_t ack_delay_us = 0;
  double participants = 1.0;
  double alpha_us = 100;
  double copy_us = 25;
  std::uint32_t threads = 8;
  double bandwidth_gbit = 10;
  double jitter = 0.5;
  std::string nic_sharing = "fifo";
  bool validate_trees = false;
  bool pmix_fences = false;
  std::size_t trace_lines = 80;
  std::string compress_threshold;
  std::string progress = "auto";
  std::string huge_pages = "auto";
  bool json = false;
  std::string replay;         // a directory of flight recordings
  std::int64_t perturb = -1;  // with replay: the first perturbation's seed
  double cut = 0.5;
};

double percentile(std::vector<TimeNs> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return static_cast<double>(values[index]) / 1000.0;  // microseconds
}

nlohmann::json percentiles_json(const std::vector<TimeNs>& values) {
  return {{"count", values.size()},
          {"p50_us", percentile(values, 0.5)},
          {"p90_us", percentile(values, 0.9)},
          {"p99_us", percentile(values, 0.99)},
          {"max_us", percentile(values, 1.0)}};
}

// Large runs go faster on huge pages, which glibc turns on only at start-up.
void maybe_use_huge_pages(const CliContext& context, const SimCliOptions& cli) {
  if (sim_wants_huge_pages(cli.huge_pages, cli.daemons)) {
    // Returns only if it did not re-execute (the tunable is set, or cannot be).
    const std::string why_not = reexec_with_huge_pages(context.param_files);
    if (!why_not.empty() && cli.huge_pages == "on") {
      std::fprintf(stderr, "grove sim: huge pages not used: %s\n", why_not.c_str());
    }
  }
}

// The simulator's options from the command line and the MCA parameters it
// defaults to; nullopt (with the error printed) if an option does not parse.
std::optional<SimOptions> sim_options(const CliContext& context, const SimCliOptions& cli) {
  SimOptions options;
  options.daemons = cli.daemons;
  auto payload = parse_size(cli.payload);
  if (!payload) {
    print_cli_error("--payload '" + cli.payload + "': expected a byte count such as 1024 or 1M");
    return std::nullopt;
  }
  options.payload_bytes = *payload;
  options.radices.routing =
      static_cast<std::uint32_t>(cli.radix ? cli.radix : context.params.get_int("rml_base_radix"));
  options.radices.release = static_cast<std::uint32_t>(
      cli.radix2 ? cli.radix2 : context.params.get_int("rml_base_radix2"));
  options.low_radix_release = context.params.get_bool("grpcomm_low_radix_release");
  if (!cli.low_radix_release.empty()) {
    auto value = parse_bool(cli.low_radix_release);
    if (!value) {
      print_cli_error("--low-radix-release '" + cli.low_radix_release +
                      "': expected true or false");
      return std::nullopt;
    }
    options.low_radix_release = *value;
  }
  const std::string topology = cli.fence_topology.empty()
                                   ? context.params.get_string("grpcomm_fence_topology")
                                   : cli.fence_topology;
  if (topology != "tree" && topology != "bruck") {
    print_cli_error("--fence-topology '" + topology + "': expected tree or bruck");
    return std::nullopt;
  }
  options.fence_topology = topology == "bruck" ? FenceTopology::bruck : FenceTopology::tree;
  options.random_faults = cli.faults;
  options.returns = cli.returns;
  options.joins = cli.joins;
  options.rounds = cli.rounds;
  options.release_delay_ns = cli.release_delay_us * 1000;
  options.release_delay_target = cli.release_delay_target;
  options.ack_delay_ns = cli.ack_delay_us * 1000;
  options.participant_fraction = cli.participants;
  options.network = NetworkModel{static_cast<TimeNs>(std::llround(cli.alpha_us * 1000)),
                                 static_cast<TimeNs>(std::llround(cli.copy_us * 1000)),
                                 cli.threads,
                                 cli.bandwidth_gbit * 1e9 / 8,
                                 cli.jitter,
                                 cli.nic_sharing == "fair" ? NicSharing::fair : NicSharing::fifo};
  options.validate_trees = cli.validate_trees;
  options.pmix_fences = cli.pmix_fences;
  options.compress_threshold = context.params.get_size("grpcomm_compress_threshold");
  if (!cli.compress_threshold.empty()) {
    auto threshold = parse_size(cli.compress_threshold);
    if (!threshold) {
      print_cli_error("--compress-threshold '" + cli.compress_threshold +
                      "': expected a byte count such as 4096 or 4k");
      return std::nullopt;
    }
    options.compress_threshold = *threshold;
  }
  options.trace_lines = cli.trace_lines;
  if (cli.faults >= cli.daemons) {
    print_cli_error("--faults " + std::to_string(cli.faults) +
                    " leaves no daemon but the controller");
    return std::nullopt;
  }
  if (cli.returns > cli.faults) {
    print_cli_error("--returns " + std::to_string(cli.returns) +
                    ": only daemons that die (--faults " + std::to_string(cli.faults) +
                    ") can come back");
    return std::nullopt;
  }
  return options;
}

// What the completed runs add up to.
struct SimTotals {
  std::vector<TimeNs> fence_ns, release_ns;
  Accounting traffic;
  std::vector<double> frames_per_daemon, bytes_per_daemon;
  std::uint64_t events = 0, killed = 0, parked = 0, replays = 0, resends = 0, failed_rounds = 0;
  std::uint64_t returned = 0, joined = 0;
  std::uint64_t pmix_released = 0, pmix_failed = 0;
  nlohmann::json failures = nlohmann::json::array();
  std::uint32_t runs_completed = 0;

  void add(const SimResult& result, const SimOptions& options) {
    ++runs_completed;
    events += result.events;
    killed += result.killed.size();
    returned += result.returned.size();
    joined += result.joined.size();
    parked += result.parked;
    replays += result.replays;
    resends += result.rollup_resends;
    failed_rounds += result.rounds_failed;
    pmix_released += result.pmix_released;
    pmix_failed += result.pmix_failed;
    fence_ns.insert(fence_ns.end(), result.fence_ns.begin(), result.fence_ns.end());
    release_ns.insert(release_ns.end(), result.release_span_ns.begin(),
                      result.release_span_ns.end());
    traffic += result.traffic;
    for (const TrafficCount& count : result.per_daemon) {
      frames_per_daemon.push_back(static_cast<double>(count.frames));
      bytes_per_daemon.push_back(static_cast<double>(count.bytes));
    }
    if (!result.ok) {
      failures.push_back({{"seed", options.seed},
                          {"violation", result.violation},
                          {"replay", replay_command(options)},
                          {"trace", result.trace}});
    }
  }
};

// Runs seed, seed+1, ... until cli.runs are done or Ctrl-C stops the sweep.
SimTotals run_seeds(SimOptions& options, const SimCliOptions& cli, SimProgress& progress) {
  SimTotals totals;
  for (std::uint32_t run = 0; run < cli.runs; ++run) {
    if (!progress.update(run, 0)) break;
    options.seed = cli.seed + run;
    // The last run's memory goes with the process (a tenth of a large run).
    options.free_memory = run + 1 < cli.runs;
    options.progress = [&progress, run](std::uint64_t events) {
      return progress.update(run, events);
    };
    SimResult result = run_simulation(options);
    if (result.interrupted) break;  // Ctrl-C: the run under way does not count
    totals.add(result, options);
  }
  return totals;
}

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values)
    sum += v;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

double max_of(const std::vector<double>& values) {
  return values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
}

// 2 if a run broke an invariant, 130 if Ctrl-C cut the sweep short, else 0.
int sim_exit_code(const SimTotals& totals, const SimProgress& progress) {
  if (!totals.failures.empty()) return 2;
  return progress.interrupted() ? 130 : 0;
}

int print_sim_json(const SimCliOptions& cli, const SimOptions& options, const SimTotals& totals,
                   const SimProgress& progress) {
  nlohmann::json out;
  out["options"] = {
      {"daemons", options.daemons},
      {"nic_sharing", cli.nic_sharing},
      {"payload_bytes", options.payload_bytes},
      {"radix", options.radices.routing},
      {"radix2", options.radices.release},
      {"low_radix_release", options.low_radix_release},
      {"fence_topology", options.fence_topology == FenceTopology::bruck ? "bruck" : "tree"},
      {"faults", cli.faults},
      {"returns", cli.returns},
      {"joins", cli.joins},
      {"rounds", cli.rounds},
      {"seed", cli.seed},
      {"runs", cli.runs}};
  out["runs_completed"] = totals.runs_completed;
  out["interrupted"] = progress.interrupted();
  out["huge_pages"] = huge_pages_in_effect();
  out["runs_failed"] = totals.failures.size();
  out["failures"] = totals.failures;
  out["events"] = totals.events;
  out["fence"] = percentiles_json(totals.fence_ns);
  out["release_span"] = percentiles_json(totals.release_ns);
  out["frames_per_daemon"] = {{"mean", mean_of(totals.frames_per_daemon)},
                              {"max", max_of(totals.frames_per_daemon)}};
  out["bytes_per_daemon"] = {{"mean", mean_of(totals.bytes_per_daemon)},
                             {"max", max_of(totals.bytes_per_daemon)}};
  out["repairs"] = {{"killed", totals.killed},
                    {"returned", totals.returned},
                    {"joined", totals.joined},
                    {"parked", totals.parked},
                    {"replays", totals.replays},
                    {"rollup_resends", totals.resends},
                    {"failed_rounds", totals.failed_rounds}};
  if (options.pmix_fences) {
    out["pmix_answers"] = {{"released", totals.pmix_released}, {"failed", totals.pmix_failed}};
  }
  nlohmann::json table = nlohmann::json::array();
  for (const auto& [key, count] : totals.traffic.by_key()) {
    table.push_back({{"type", std::string(frame_type_name(key.type))},
                     {"tag", std::string(tag_name(key.tag))},
                     {"topology", std::string(topology_name(key.topology))},
                     {"frames", count.frames},
                     {"bytes", count.bytes}});
  }
  out["traffic"] = table;
  std::cout << out.dump(2) << "\n";
  return sim_exit_code(totals, progress);
}

void print_sim_summary(const SimCliOptions& cli, const SimOptions& options, const SimTotals& totals,
                       const SimProgress& progress) {
  std::printf(
      "grove sim: %u daemons, %s released per round, routing radix %u, release radix %u "
      "(low-radix release %s)\n",
      options.daemons, format_bytes(static_cast<double>(options.payload_bytes)).c_str(),
      options.radices.routing, options.radices.release, options.low_radix_release ? "on" : "off");
  if (options.fence_topology == FenceTopology::bruck) {
    std::printf("fences: a Bruck exchange among the participants' daemons (no release)\n");
  }
  if (progress.interrupted()) {
    std::printf("interrupted by Ctrl-C after %u of %u runs; the figures below are theirs\n",
                totals.runs_completed, cli.runs);
  }
  std::printf("%u run(s) from seed %llu, %u round(s) each, %u fault(s) per run, %llu events\n",
              totals.runs_completed, static_cast<unsigned long long>(cli.seed), cli.rounds,
              cli.faults, static_cast<unsigned long long>(totals.events));
  const std::vector<TimeNs>& fence_ns = totals.fence_ns;
  const std::vector<TimeNs>& release_ns = totals.release_ns;
  std::printf(
      "fence (first contribution to last release, virtual): p50 %.1f us  p90 %.1f us  "
      "p99 %.1f us  max %.1f us\n",
      percentile(fence_ns, 0.5), percentile(fence_ns, 0.9), percentile(fence_ns, 0.99),
      percentile(fence_ns, 1.0));
  std::printf("release span at the originator: p50 %.1f us  p90 %.1f us  max %.1f us\n",
              percentile(release_ns, 0.5), percentile(release_ns, 0.9),
              percentile(release_ns, 1.0));
  std::printf("per daemon: %.1f frames (max %.0f), %s (max %s)\n",
              mean_of(totals.frames_per_daemon), max_of(totals.frames_per_daemon),
              format_bytes(mean_of(totals.bytes_per_daemon)).c_str(),
              format_bytes(max_of(totals.bytes_per_daemon)).c_str());
  if (cli.faults > 0 || cli.joins > 0) {
    std::printf(
        "repairs: %llu killed, %llu came back, %llu joined, %llu parked, %llu replays, "
        "%llu rollup re-sends, %llu rounds ended in error\n",
        static_cast<unsigned long long>(totals.killed),
        static_cast<unsigned long long>(totals.returned),
        static_cast<unsigned long long>(totals.joined),
        static_cast<unsigned long long>(totals.parked),
        static_cast<unsigned long long>(totals.replays),
        static_cast<unsigned long long>(totals.resends),
        static_cast<unsigned long long>(totals.failed_rounds));
  }
  if (options.pmix_fences) {
    std::printf("PMIx fence answers (every one checked): %llu released, %llu failed\n",
                static_cast<unsigned long long>(totals.pmix_released),
                static_cast<unsigned long long>(totals.pmix_failed));
  }
}

void print_traffic_table(const Accounting& traffic) {
  std::printf("%-14s %-14s %-9s %12s %14s\n", "frame", "tag", "topology", "frames", "bytes");
  for (const auto& [key, count] : traffic.by_key()) {
    std::printf("%-14s %-14s %-9s %12llu %14llu\n", std::string(frame_type_name(key.type)).c_str(),
                std::string(tag_name(key.tag)).c_str(),
                std::string(topology_name(key.topology)).c_str(),
                static_cast<unsigned long long>(count.frames),
                static_cast<unsigned long long>(count.bytes));
  }
}

// Each broken invariant with the events before it and the line that replays it.
void print_failures(const nlohmann::json& failures) {
  for (const auto& failure : failures) {
    std::printf("\nVIOLATION (seed %llu): %s\n",
                static_cast<unsigned long long>(failure["seed"].get<std::uint64_t>()),
                failure["violation"].get<std::string>().c_str());
    for (const auto& line : failure["trace"])
      std::printf("  %s\n", line.get<std::string>().c_str());
    std::printf("replay with: %s\n", failure["replay"].get<std::string>().c_str());
  }
}

int print_sim_text(const SimCliOptions& cli, const SimOptions& options, const SimTotals& totals,
                   const SimProgress& progress) {
  print_sim_summary(cli, options, totals, progress);
  print_traffic_table(totals.traffic);
  if (totals.failures.empty()) {
    std::printf("all invariants held in %u run(s)\n", totals.runs_completed);
  } else {
    print_failures(totals.failures);
  }
  return sim_exit_code(totals, progress);
}

int run_sim(const CliContext& context, const SimCliOptions& cli) {
  maybe_use_huge_pages(context, cli);
  std::optional<SimOptions> options = sim_options(context, cli);
  if (!options) return 1;
  auto progress_mode = parse_progress_mode(cli.progress);
  if (!progress_mode) {
    print_cli_error("--progress '" + cli.progress + "': expected auto, always or never");
    return 1;
  }
  SimProgress progress(*progress_mode, cli.runs);
  const SimTotals totals = run_seeds(*options, cli, progress);
  if (cli.json) return print_sim_json(cli, *options, totals, progress);
  return print_sim_text(cli, *options, totals, progress);
}

// The delays a run's daemons apply: release holds (a fault's window) and
// acks that wait to share frames.
void add_delay_options(CLI::App& command, SimCliOptions& options) {
  command
      .add_option("--release-delay-us", options.release_delay_us,
                  "Hold each release this long at every daemon (fault window)")
      ->capture_default_str();
  command
      .add_option("--release-delay-target", options.release_delay_target,
                  "Vpid that holds releases; -1 every daemon, -2 the first fault's victim")
      ->check(CLI::Range(std::int64_t{-2}, std::int64_t{0xFFFFFFF}))
      ->capture_default_str();
  command
      .add_option("--ack-delay-us", options.ack_delay_us,
                  "Fence-release acks wait this long to share frames "
                  "(grpcomm_release_ack_delay_us; 0: each at once)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1000000}))
      ->capture_default_str();
}

// A real DVM's flight recordings: replayed, or perturbed from a cut.
void add_replay_options(CLI::App& command, SimCliOptions& options) {
  command.add_option("--replay", options.replay,
                     "Replay the flight recordings in this directory (grove status --dump) "
                     "through fresh engines, and check them; the other options do not apply");
  command
      .add_option("--perturb", options.perturb,
                  "With --replay: keep the recorded schedule up to --cut, then let jitter "
                  "(--alpha, --jitter) and --faults daemon deaths drawn from this seed take "
                  "over; --runs seeds from it, stopping at the first that breaks something")
      ->check(CLI::Range(std::int64_t{0}, INT64_MAX));
  command
      .add_option("--cut", options.cut,
                  "With --perturb: where the recorded schedule ends, as a fraction of the "
                  "controller's recorded span")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

// A simulation, or a real history replayed or perturbed.
int sim_action(CliContext& context, const SimCliOptions& options) {
  if (options.perturb >= 0 && options.replay.empty()) {
    print_cli_error("--perturb perturbs a real history: give its recordings with --replay DIR");
    return 2;
  }
  if (options.perturb >= 0) {
    PerturbCli perturb{static_cast<std::uint64_t>(options.perturb),
                       options.runs,
                       options.cut,
                       options.faults,
                       options.alpha_us,
                       options.jitter};
    return run_sim_perturb(options.replay, perturb, options.json);
  }
  if (!options.replay.empty()) return run_sim_replay(options.replay, options.json);
  return run_sim(context, options);
}

}  // namespace

void add_sim_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<SimCliOptions>();
  CLI::App* command = app.add_subcommand(
      "sim", "Simulate fences over thousands of daemons with faults; check every invariant");
  add_param_options(*command, context);
  command->add_option("-n,--daemons", options->daemons, "Daemon count")
      ->check(CLI::Range(2u, 1000000u))
      ->capture_default_str();
  command
      ->add_option("--payload", options->payload,
                   "Bytes released per fence (split among participants)")
      ->capture_default_str();
  command->add_option("--radix", options->radix, "Routing radix (default: rml_base_radix)")
      ->check(CLI::Range(2, 65535));
  command->add_option("--radix2", options->radix2, "Release radix (default: rml_base_radix2)")
      ->check(CLI::Range(2, 65535));
  command->add_option("--low-radix-release", options->low_radix_release,
                      "true/false (default: grpcomm_low_radix_release)");
  command->add_option("--fence-topology", options->fence_topology,
                      "tree or bruck (default: grpcomm_fence_topology)");
  command->add_option("--faults", options->faults, "Random daemon deaths per run")
      ->capture_default_str();
  command
      ->add_option("--returns", options->returns,
                   "Daemons that die and come back at their vpid per run (at most --faults)")
      ->capture_default_str();
  command
      ->add_option("--joins", options->joins,
                   "New daemons that join the DVM mid-run, past its last vpid, per run")
      ->check(CLI::Range(0u, 100000u))
      ->capture_default_str();
  command->add_option("--seed", options->seed, "Seed of the first run")->capture_default_str();
  command->add_option("--runs", options->runs, "Runs, with seeds seed, seed+1, ...")
      ->check(CLI::Range(1u, 10000000u))
      ->capture_default_str();
  command->add_option("--rounds", options->rounds, "Back-to-back fences per run")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  add_delay_options(*command, *options);
  command
      ->add_option("--participants", options->participants,
                   "Fraction of daemons hosting fence participants")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  command->add_option("--alpha", options->alpha_us, "Hop latency in microseconds")
      ->capture_default_str();
  command->add_option("-c,--copy-cost", options->copy_us, "Cost of one copy in microseconds")
      ->capture_default_str();
  command->add_option("-t,--threads", options->threads, "Worker threads sharing the copies")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  command->add_option("-B,--bandwidth", options->bandwidth_gbit, "NIC bandwidth in Gbit/s")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command
      ->add_option("--jitter", options->jitter,
                   "Random extra latency per frame, as a fraction of alpha")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  command
      ->add_option("--nic-sharing", options->nic_sharing,
                   "How a NIC's concurrent copies share its bandwidth: fifo (one after another) "
                   "or fair (all at once, as TCP flows do; matches measured daemons)")
      ->check(CLI::IsMember({"fifo", "fair"}))
      ->capture_default_str();
  command->add_flag("--validate-trees", options->validate_trees,
                    "Validate every derived tree after every repair (slow at scale)");
  command
      ->add_option("--pmix-fences", options->pmix_fences,
                   "true: enter every round through each daemon's PMIx fence book (the PMIx "
                   "bridge's state machine) and check every answer it gives")
      ->capture_default_str();
  command->add_option("--compress-threshold", options->compress_threshold,
                      "Deflate releases larger than this (default: grpcomm_compress_threshold)");
  command
      ->add_option("--trace", options->trace_lines,
                   "Events shown before a violation (0: none, and a faster run)")
      ->capture_default_str();
  command
      ->add_option("--progress", options->progress,
                   "auto (a bar on a terminal after a second), always (a line on stderr every "
                   "half second), never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  command
      ->add_option("--huge-pages", options->huge_pages,
                   "Back the simulation's memory with transparent huge pages: auto (from " +
                       std::to_string(kHugePagesFrom) +
                       " daemons), on, off. Re-executes grove once with GLIBC_TUNABLES set")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  command->add_flag("--json", options->json, "Print JSON");
  add_replay_options(*command, *options);
  context.actions[command] = [&context, options] { return sim_action(context, *options); };
}

}  // namespace grove
