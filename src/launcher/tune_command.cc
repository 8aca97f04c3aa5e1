// grove tune: the cost model's constants measured on a running DVM's hosts,
// and what they advise for its two release parameters. Two short-lived
// sibling DVMs on the same hosts release over a flat and a radix-2 tree,
// batches interleaved so both see the same machine; grpcomm/release_fit.h
// solves for alpha, c and B.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "control/session_dir.h"
#include "grpcomm/release_fit.h"
#include "launcher/commands.h"
#include "launcher/dvm_client.h"
#include "os/child_process.h"
#include "util/text.h"

extern char** environ;

namespace grove {
namespace {

struct TuneOptions {
  std::string selector;
  std::string small = "1KiB";
  std::string large = "256KiB";
  std::uint32_t count = 20;
  std::uint32_t batches = 5;
  std::string modex;  // empty: the DVM's mean fence release
  bool json = false;
};

volatile sig_atomic_t tune_interrupted = 0;
void on_tune_interrupt(int) {
  tune_interrupted = 1;
}

// Runs this program with `args`, stdout to /dev/null: its exit status.
int run_self(const std::vector<std::string>& args) {
  std::vector<std::string> argv{"grove"};
  argv.insert(argv.end(), args.begin(), args.end());
  ChildSpec child;
  child.mechanism = StartMechanism::spawn;
  child.program = "/proc/self/exe";
  child.search_path = false;
  child.argv = argv;
  child.fds = {ChildFd::dev_null(STDOUT_FILENO, O_WRONLY)};
  child.signals = SignalReset::caught;
  child.mask = SignalMask::inherit;
  auto started = start_child(child);
  return started ? wait_exit_status(started->pid) : -1;
}

// A sibling DVM tune starts, and stops however tune ends.
class SiblingDvm {
 public:
  SiblingDvm(std::string name, std::vector<std::string> start_args)
      : name_(std::move(name)), start_args_(std::move(start_args)) {}
  ~SiblingDvm() { stop(); }
  // Stopped in order, it leaves nothing, not even its log; a DVM that
  // would not stop is named, for `grove stop --dvm`.
  void stop() {
    if (uri_.empty()) return;
    auto stopped = ask_dvm(uri_, {{"cmd", "stop"}}, std::chrono::seconds(120));
    if (stopped && pid_ > 0) {
      std::remove((base_ + "/dvm-" + std::to_string(pid_) + ".log").c_str());
    } else if (!stopped) {
      print_cli_error("grove tune: the " + name_ + " DVM (" + uri_ +
                      ") did not stop: " + stopped.error().message);
    }
    uri_.clear();
  }
  SiblingDvm(const SiblingDvm&) = delete;
  SiblingDvm& operator=(const SiblingDvm&) = delete;

  Status start(const std::string& base) {
    const std::string uri_file = base + "/tune-" + name_ + "-" + std::to_string(getpid());
    std::vector<std::string> args{"start", "--daemonize", "--another", "--report-uri", uri_file};
    args.insert(args.end(), start_args_.begin(), start_args_.end());
    const int status = run_self(args);
    std::ifstream(uri_file) >> uri_;
    std::remove(uri_file.c_str());
    if (status != 0 || uri_.empty())
      return Error{"the " + name_ + " DVM did not start (grove start exited " +
                   std::to_string(status) + ")"};
    base_ = base;
    if (auto started = ask_dvm(uri_, {{"cmd", "status"}}, std::chrono::seconds(30)))
      pid_ = started->value("pid", 0);
    return ok_status();
  }
  const std::string& uri() const { return uri_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::string> start_args_;
  std::string uri_;
  std::string base_;  // the session base its log is in
  pid_t pid_ = 0;     // its controller
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double percentile(std::vector<double> values, double at) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(at * static_cast<double>(values.size() - 1))];
}

// The mean fence release the controller sent (bytes per frame): this
// DVM's typical modex, or nothing if no fence has released yet.
std::optional<std::pair<double, std::uint64_t>> typical_release(const nlohmann::json& status) {
  for (const auto& daemon : status.value("counters", nlohmann::json::array())) {
    if (daemon.value("vpid", 1) != 0) continue;
    std::uint64_t frames = 0, bytes = 0;
    for (const auto& entry : daemon.value("engine", nlohmann::json::array())) {
      if (entry.value("tag", "") != "fence-release" || entry.value("type", "") != "xcast-data")
        continue;
      frames += entry.value("frames", std::uint64_t{0});
      bytes += entry.value("bytes", std::uint64_t{0});
    }
    if (frames > 0) return std::make_pair(static_cast<double>(bytes) / frames, frames);
  }
  return std::nullopt;
}

struct Measured {
  std::vector<double> spans;          // every round
  std::vector<double> batch_medians;  // one per batch
};

// The payloads to measure with, and the modex to advise for.
struct TuneSizes {
  std::uint64_t small = 0, large = 0;
  std::optional<std::uint64_t> modex;  // nullopt: the DVM's mean fence release
};

// nullopt (the error printed) if --small, --large or --modex do not parse.
std::optional<TuneSizes> tune_sizes(const TuneOptions& options) {
  const auto small = parse_size(options.small), large = parse_size(options.large);
  if (!small || !large || *large <= *small || *large > (64u << 20)) {
    print_cli_error(
        "--small and --large: byte counts (such as 1KiB and 256KiB), the large one "
        "larger, at most 64MiB");
    return std::nullopt;
  }
  TuneSizes sizes{*small, *large, std::nullopt};
  if (!options.modex.empty()) {
    sizes.modex = parse_size(options.modex);
    if (!sizes.modex) {
      print_cli_error("--modex '" + options.modex + "': expected a byte count such as 16KiB");
      return std::nullopt;
    }
  }
  return sizes;
}

// The hosts of the DVM's living daemons, in vpid order, each once.
struct TuneHosts {
  std::vector<std::string> hosts;
  std::uint64_t living = 0;  // daemons up

  bool local() const { return hosts.size() == 1; }
  // Each sibling DVM's daemons: one per host, or on one host as many as it has.
  std::uint64_t daemons() const { return local() ? living : hosts.size(); }
};

TuneHosts living_hosts(const nlohmann::json& status) {
  TuneHosts hosts;
  std::set<std::string> seen;
  for (const auto& daemon : status.value("daemons", nlohmann::json())) {
    if (daemon.value("state", "") != "up") continue;
    ++hosts.living;
    const std::string host = daemon.value("host", "");
    if (seen.insert(host).second) hosts.hosts.push_back(host);
  }
  return hosts;
}

std::string tune_hostfile(const std::string& base) {
  return base + "/tune-hosts-" + std::to_string(getpid());
}

// `grove start`'s arguments placing a sibling DVM where the DVM runs (its
// hosts written to a hostfile in `base`), with the DVM's own settings.
std::vector<std::string> sibling_placement(const TuneHosts& hosts, const nlohmann::json& status,
                                           const std::string& base) {
  std::vector<std::string> where;
  if (hosts.local()) {
    where = {"--local", std::to_string(hosts.daemons())};
  } else {
    const std::string hostfile = tune_hostfile(base);
    std::ofstream file(hostfile);
    for (const std::string& host : hosts.hosts)
      file << host << "\n";
    where = {"--hostfile", hostfile};
  }
  // The DVM's own settings go along, but for the release tree's.
  const nlohmann::json params = status.value("params", nlohmann::json());
  for (const auto& [name, value] : params.items()) {
    if (name == "rml_base_radix2" || name == "grpcomm_low_radix_release") continue;
    where.insert(where.end(), {"--mca", name, value.get<std::string>()});
  }
  return where;
}

std::vector<std::string> with_release_radix(std::vector<std::string> args, std::uint64_t radix2) {
  args.insert(args.end(), {"--mca", "grpcomm_low_radix_release", "true", "--mca", "rml_base_radix2",
                           std::to_string(radix2)});
  return args;
}

using Measurements = std::map<std::string, Measured>;  // "flat small", ...

// Starts the siblings in turn: what went wrong ("" if nothing).
std::string start_siblings(SiblingDvm& flat, SiblingDvm& binary, const std::string& base) {
  std::string failure;
  for (SiblingDvm* sibling : {&flat, &binary}) {
    if (tune_interrupted) failure = "interrupted";
    if (!failure.empty()) break;
    if (Status started = sibling->start(base); !started) failure = started.error().message;
  }
  return failure;
}

// The batches of releases of both sizes on both siblings, into `measured`:
// what went wrong ("" if nothing).
std::string run_batches(SiblingDvm& flat, SiblingDvm& binary, const TuneOptions& options,
                        const TuneSizes& sizes, Measurements& measured) {
  std::string failure;
  for (std::uint32_t batch = 0; failure.empty() && batch < options.batches; ++batch) {
    // The order flips every batch: neither tree always goes first.
    std::vector<SiblingDvm*> order{&flat, &binary};
    if (batch % 2 == 1) std::reverse(order.begin(), order.end());
    for (SiblingDvm* sibling : order) {
      for (const std::uint64_t size : {sizes.small, sizes.large}) {
        if (tune_interrupted) failure = "interrupted";
        if (!failure.empty()) break;
        auto bench = ask_dvm(
            sibling->uri(),
            {{"cmd", "bench"}, {"kind", "release"}, {"size", size}, {"count", options.count}},
            std::chrono::seconds(600));
        if (!bench) {
          failure = "benchmark on the " + sibling->name() + " DVM: " + bench.error().message;
          break;
        }
        Measured& into = measured[sibling->name() + (size == sizes.small ? " small" : " large")];
        const auto spans = (*bench)["spans_us"].get<std::vector<double>>();
        into.spans.insert(into.spans.end(), spans.begin(), spans.end());
        into.batch_medians.push_back(median(spans));
      }
    }
  }
  return failure;
}

struct Measurement {
  Measurements measured;
  std::string failure;  // "" if measured; "interrupted" by a signal
};

// Starts the two sibling DVMs, measures their releases, and stops them.
Measurement measure_siblings(const TuneOptions& options, const TuneSizes& sizes,
                             const TuneHosts& hosts, const std::vector<std::string>& where,
                             const std::string& base) {
  // Ctrl-C, SIGTERM and SIGHUP end the measurement, not the process: the
  // DVMs it started are stopped first (until then the signals only count).
  struct sigaction interrupt {
  }, before[3];
  interrupt.sa_handler = on_tune_interrupt;
  sigemptyset(&interrupt.sa_mask);
  const int caught[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int i = 0; i < 3; ++i)
    sigaction(caught[i], &interrupt, &before[i]);
  const std::uint64_t daemons = hosts.daemons();
  std::fprintf(stderr,
               "grove tune: two DVMs of %llu daemons on the same %s (flat and radix-2 releases), "
               "%u batches of %u releases of %llu and %llu bytes each\n",
               static_cast<unsigned long long>(daemons), hosts.local() ? "host" : "hosts",
               options.batches, options.count, static_cast<unsigned long long>(sizes.small),
               static_cast<unsigned long long>(sizes.large));
  SiblingDvm flat("flat", with_release_radix(where, std::max<std::uint64_t>(64, daemons)));
  SiblingDvm binary("radix-2", with_release_radix(where, 2));
  Measurement result;
  result.failure = start_siblings(flat, binary, base);
  std::remove(tune_hostfile(base).c_str());
  if (result.failure.empty()) {
    result.failure = run_batches(flat, binary, options, sizes, result.measured);
  }
  flat.stop();
  binary.stop();
  for (int i = 0; i < 3; ++i)
    sigaction(caught[i], &before[i], nullptr);
  return result;
}

// The constants fitted to the median spans, and their spread: the same fit
// from each batch's medians alone.
struct TuneFit {
  FittedConstants fit;
  std::vector<double> alphas, copies, gbits;
};

// nullopt (the error printed) if the spans fit no constants.
std::optional<TuneFit> fit_constants(Measurements& measured, std::uint64_t daemons,
                                     const TuneSizes& sizes, std::uint32_t batches) {
  auto spans_of = [&](auto pick) {
    return ReleaseSpans{pick(measured["flat small"]), pick(measured["flat large"]),
                        pick(measured["radix-2 small"]), pick(measured["radix-2 large"])};
  };
  const auto small = static_cast<double>(sizes.small), large = static_cast<double>(sizes.large);
  auto fit = fit_release_constants(daemons, small, large,
                                   spans_of([](const Measured& m) { return median(m.spans); }));
  if (!fit) {
    print_cli_error("grove tune: " + fit.error().message);
    return std::nullopt;
  }
  TuneFit result{*fit, {}, {}, {}};
  for (std::uint32_t batch = 0; batch < batches; ++batch) {
    auto one = fit_release_constants(daemons, small, large, spans_of([batch](const Measured& m) {
                                       return m.batch_medians[batch];
                                     }));
    if (!one) continue;
    result.alphas.push_back(one->constants.alpha_us);
    result.copies.push_back(one->constants.copy_us);
    result.gbits.push_back(one->constants.bandwidth_bytes_per_s * 8 / 1e9);
  }
  return result;
}

// Advice for the running DVM's own size and its typical modex.
struct TuneAdvice {
  double payload = 0;
  std::string payload_source;
  std::uint64_t routing = 0;  // the DVM's routing radix
  ReleaseAdvice release;
};

TuneAdvice advise(const nlohmann::json& status, const TuneSizes& sizes, std::uint64_t living,
                  const CostConstants& constants) {
  const auto& modex = sizes.modex;
  const auto typical = typical_release(status);
  TuneAdvice advice;
  advice.payload = modex     ? static_cast<double>(*modex)
                   : typical ? typical->first
                             : static_cast<double>(sizes.small);
  advice.payload_source = modex     ? "--modex"
                          : typical ? "the mean fence release of this DVM (" +
                                          std::to_string(typical->second) + " frames)"
                                    : "no fence has run on this DVM: the small payload";
  advice.routing = static_cast<std::uint64_t>(status.value("radix", 64));
  const auto radix2 = static_cast<std::uint64_t>(status.value("radix2", 4));
  const bool low_radix = status.value("low_radix_release", true);
  advice.release =
      advise_release(living, advice.payload, constants, advice.routing, radix2, low_radix);
  return advice;
}

// What grove tune found, for printing.
struct TuneReport {
  const TuneOptions& options;
  const TuneSizes& sizes;
  const TuneHosts& hosts;
  Measurements& measured;
  const TuneFit& fit;
  const TuneAdvice& advice;
};

nlohmann::json min_max_json(const std::vector<double>& values) {
  if (values.empty()) return nlohmann::json::array();
  return nlohmann::json::array({*std::min_element(values.begin(), values.end()),
                                *std::max_element(values.begin(), values.end())});
}

void print_tune_json(const TuneReport& report) {
  const CostConstants& constants = report.fit.fit.constants;
  const ReleaseAdvice& advice = report.advice.release;
  nlohmann::json out{{"daemons", report.hosts.daemons()},
                     {"small_bytes", report.sizes.small},
                     {"large_bytes", report.sizes.large},
                     {"batches", report.options.batches},
                     {"count", report.options.count}};
  for (const auto& [name, m] : report.measured)
    out["spans"][name] = {{"median_us", median(m.spans)},
                          {"p10_us", percentile(m.spans, 0.1)},
                          {"p90_us", percentile(m.spans, 0.9)}};
  out["fit"] = {{"alpha_us", constants.alpha_us},
                {"c_us", constants.copy_us},
                {"bandwidth_gbit_s", constants.bandwidth_bytes_per_s * 8 / 1e9},
                {"alpha_range_us", min_max_json(report.fit.alphas)},
                {"c_range_us", min_max_json(report.fit.copies)},
                {"bandwidth_range_gbit_s", min_max_json(report.fit.gbits)},
                {"alpha_clamped", report.fit.fit.alpha_clamped},
                {"c_clamped", report.fit.fit.copy_clamped}};
  out["advice"] = {{"daemons", report.hosts.living},
                   {"modex_bytes", report.advice.payload},
                   {"modex_from", report.advice.payload_source},
                   {"rml_base_radix2", advice.radix2},
                   {"predicted_us", advice.best_us},
                   {"routing_tree_us", advice.routing_us},
                   {"current_us", advice.current_us},
                   {"grpcomm_low_radix_release", advice.low_radix_pays}};
  std::cout << out.dump(2) << "\n";
}

void print_spans_table(const TuneReport& report) {
  std::printf("%-10s %10s %12s %12s\n", "release", "bytes", "median us", "p10-p90 us");
  for (const char* tree : {"flat", "radix-2"}) {
    for (const auto& [which, size] :
         {std::pair<const char*, std::uint64_t>{"small", report.sizes.small},
          {"large", report.sizes.large}}) {
      const Measured& m = report.measured[std::string(tree) + " " + which];
      std::printf("%-10s %10llu %12.1f %5.1f-%.1f\n", tree, static_cast<unsigned long long>(size),
                  median(m.spans), percentile(m.spans, 0.1), percentile(m.spans, 0.9));
    }
  }
}

// The batches' range in `format`, or nothing with fewer than two batches.
std::string batch_spread(const std::vector<double>& values, const char* format) {
  if (values.size() < 2) return std::string();
  char text[96];
  std::snprintf(text, sizeof text, format, *std::min_element(values.begin(), values.end()),
                *std::max_element(values.begin(), values.end()));
  return std::string(text);
}

void print_fitted_constants(const TuneFit& fit) {
  const CostConstants& constants = fit.fit.constants;
  const double gbit = constants.bandwidth_bytes_per_s * 8 / 1e9;
  std::printf("fitted, T(r) = ceil(log_r N) * (alpha + r*c + r*M/B):\n");
  std::printf("  alpha %8.1f us%s%s\n", constants.alpha_us,
              batch_spread(fit.alphas, "   (batches: %.1f to %.1f)").c_str(),
              fit.fit.alpha_clamped ? "  (below the noise: taken as 0)" : "");
  std::printf("  c     %8.1f us%s%s\n", constants.copy_us,
              batch_spread(fit.copies, "   (batches: %.1f to %.1f)").c_str(),
              fit.fit.copy_clamped ? "  (below the noise: taken as 0)" : "");
  std::printf("  B     %8.3f Gbit/s%s\n", gbit,
              batch_spread(fit.gbits, " (batches: %.3f to %.3f)").c_str());
}

void print_advice(const TuneAdvice& advice, std::uint64_t living) {
  const ReleaseAdvice& release = advice.release;
  std::printf("for this DVM (%llu daemons) and a modex of %.0f bytes (%s):\n",
              static_cast<unsigned long long>(living), advice.payload,
              advice.payload_source.c_str());
  std::printf(
      "  release radix %llu: %.1f us predicted; the routing tree (radix %llu): %.1f us; "
      "as it runs now: %.1f us\n",
      static_cast<unsigned long long>(release.radix2), release.best_us,
      static_cast<unsigned long long>(advice.routing), release.routing_us, release.current_us);
  if (release.low_radix_pays) {
    std::printf(
        "  advice: --mca grpcomm_low_radix_release true --mca rml_base_radix2 %llu "
        "(%.0f%% less than the routing tree)\n",
        static_cast<unsigned long long>(release.radix2),
        100.0 * (1.0 - release.best_us / release.routing_us));
  } else {
    std::printf(
        "  advice: --mca grpcomm_low_radix_release false (a separate release tree "
        "gains less than 5%% at this modex)\n");
  }
}

int tune(const TuneOptions& options) {
  const std::optional<TuneSizes> sizes = tune_sizes(options);
  if (!sizes) return 1;
  auto status = ask_dvm(options.selector, {{"cmd", "status"}}, std::chrono::seconds(30));
  if (!status) {
    print_cli_error(status.error().message);
    return 1;
  }
  const TuneHosts hosts = living_hosts(*status);
  const std::uint64_t daemons = hosts.daemons();
  if (daemons < 4) {
    print_cli_error("grove tune needs a DVM of 4 daemons (hosts) or more: with " +
                    std::to_string(daemons) +
                    ", a flat and a radix-2 release are the same tree and alpha and c cannot be "
                    "told apart");
    return 1;
  }
  auto base = session_base();
  if (!base) {
    print_cli_error(base.error().message);
    return 1;
  }
  const std::vector<std::string> where = sibling_placement(hosts, *status, *base);
  Measurement measurement = measure_siblings(options, *sizes, hosts, where, *base);
  if (!measurement.failure.empty()) {
    print_cli_error("grove tune: " + measurement.failure);
    return measurement.failure == "interrupted" ? 130 : 1;
  }
  const std::optional<TuneFit> fit =
      fit_constants(measurement.measured, daemons, *sizes, options.batches);
  if (!fit) return 1;
  const TuneAdvice advice = advise(*status, *sizes, hosts.living, fit->fit.constants);
  const TuneReport report{options, *sizes, hosts, measurement.measured, *fit, advice};
  if (options.json) {
    print_tune_json(report);
    return 0;
  }
  print_spans_table(report);
  print_fitted_constants(*fit);
  print_advice(advice, hosts.living);
  return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, CliContext& context) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App* command =
      app.add_subcommand("tune",
                         "Measure the cost model's constants on a running DVM's hosts and advise "
                         "rml_base_radix2 and grpcomm_low_radix_release");
  add_param_options(*command, context);
  add_dvm_option(*command, options->selector);
  command->add_option("--small", options->small, "The small payload (fits alpha and c)")
      ->capture_default_str();
  command->add_option("--large", options->large, "The large payload (fits B)")
      ->capture_default_str();
  command->add_option("--count", options->count, "Releases per payload and tree in each batch")
      ->check(CLI::Range(1u, 100000u))
      ->capture_default_str();
  command
      ->add_option("--batches", options->batches,
                   "Batches, the trees' order flipped each time (the spread is over them)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  command->add_option("--modex", options->modex,
                      "The modex to advise for (default: this DVM's mean fence release)");
  command->add_flag("--json", options->json, "Print JSON");
  context.actions[command] = [options] { return tune(*options); };
}

}  // namespace grove
