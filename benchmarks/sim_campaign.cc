// The fault-schedule hunt (not a CI test): a million seeded schedules over the
// campaign matrix (src/sim/campaign.h), on every core, each checked for every
// invariant on every step and for liveness at the end. Prints a table per
// radix pair and fault load and every violation with its replay line, and
// writes the whole report as JSON.
// Usage: bench_sim_campaign [--schedules N] [--seed S] [--first I] [--jobs J] [--json FILE]
//                           [--fence-topology tree|bruck]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "sim/campaign.h"
#include "util/text.h"

using namespace grove;

namespace {

struct Args {
  std::uint64_t schedules = 1'000'000;
  std::uint64_t seed = 20261130;
  std::uint64_t first = 0;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string json;
  FenceTopology fences = FenceTopology::tree;
};

bool parse_args(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i];
    if (name == "--help" || name == "-h") return false;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_sim_campaign: '%s' needs a value\n", name.c_str());
      return false;
    }
    std::string value = argv[++i];
    if (name == "--json") {
      args.json = value;
      continue;
    }
    if (name == "--fence-topology") {
      if (value != "tree" && value != "bruck") {
        std::fprintf(stderr, "bench_sim_campaign: --fence-topology '%s': expected tree or bruck\n",
                     value.c_str());
        return false;
      }
      args.fences = value == "bruck" ? FenceTopology::bruck : FenceTopology::tree;
      continue;
    }
    auto number = parse_int(value);
    if (!number || *number < 0) {
      std::fprintf(stderr, "bench_sim_campaign: '%s %s': expected a count\n", name.c_str(),
                   value.c_str());
      return false;
    }
    if (name == "--schedules") {
      args.schedules = static_cast<std::uint64_t>(*number);
    } else if (name == "--seed") {
      args.seed = static_cast<std::uint64_t>(*number);
    } else if (name == "--first") {
      args.first = static_cast<std::uint64_t>(*number);
    } else if (name == "--jobs" && *number > 0) {
      args.jobs = static_cast<unsigned>(*number);
    } else {
      std::fprintf(stderr, "bench_sim_campaign: unknown option '%s'\n", name.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  if (!parse_args(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: bench_sim_campaign [--schedules N] [--seed S] [--first I] [--jobs J]"
                 " [--json FILE] [--fence-topology tree|bruck]\n");
    return 2;
  }
  const auto& cells = campaign_cells();
  std::printf(
      "campaign: %llu schedules from seed %llu (index %llu on), %zu cells, %u jobs, %s fences\n",
      static_cast<unsigned long long>(args.schedules), static_cast<unsigned long long>(args.seed),
      static_cast<unsigned long long>(args.first), cells.size(), args.jobs,
      args.fences == FenceTopology::bruck ? "bruck" : "tree");
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> next{0};
  std::mutex lock;
  CampaignReport report;
  auto worker = [&] {
    CampaignReport mine;
    for (std::uint64_t offset; (offset = next.fetch_add(1)) < args.schedules;) {
      run_campaign_schedule(args.seed, args.first + offset, mine, args.fences);
      if ((offset + 1) % 50'000 == 0) {
        std::lock_guard guard(lock);
        double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::printf("  %llu schedules, %.0f s\n", static_cast<unsigned long long>(offset + 1),
                    seconds);
        std::fflush(stdout);
      }
    }
    std::lock_guard guard(lock);
    report.merge(std::move(mine));
  };
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < args.jobs; ++i)
    threads.emplace_back(worker);
  for (auto& thread : threads)
    thread.join();
  std::sort(report.violations.begin(), report.violations.end(),
            [](const auto& a, const auto& b) { return a.index < b.index; });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // The table: radix pair x fault load, summed over DVM sizes.
  std::map<std::string, std::map<std::string, std::pair<std::uint64_t, std::uint64_t>>> table;
  std::vector<std::string> loads;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CampaignCell& cell = cells[i];
    std::string pair = std::to_string(cell.radix) + "/" + std::to_string(cell.radix2);
    std::string load =
        cell.max_fault_share == 0
            ? "0"
            : "<=" + std::to_string(static_cast<int>(cell.max_fault_share * 100 + 0.5)) + "%";
    if (std::find(loads.begin(), loads.end(), load) == loads.end()) loads.push_back(load);
    auto& entry = table[pair][load];
    entry.first += report.runs_per_cell[i];
    entry.second += report.violations_per_cell[i];
  }
  std::printf("\n| radix/radix2 |");
  for (const auto& load : loads)
    std::printf(" faults %s |", load.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < loads.size(); ++i)
    std::printf("---|");
  std::printf("\n");
  for (const auto& [pair, row] : table) {
    std::printf("| %s |", pair.c_str());
    for (const auto& load : loads) {
      const auto& [runs, bad] = row.at(load);
      std::printf(" %llu runs, %llu bad |", static_cast<unsigned long long>(runs),
                  static_cast<unsigned long long>(bad));
    }
    std::printf("\n");
  }
  std::printf(
      "\n%llu schedules, %llu events, %llu deaths, %llu returns, %llu joins, %zu violations in "
      "%.0f s (%.0f per s)\n",
      static_cast<unsigned long long>(report.schedules),
      static_cast<unsigned long long>(report.events),
      static_cast<unsigned long long>(report.deaths),
      static_cast<unsigned long long>(report.returns),
      static_cast<unsigned long long>(report.joins), report.violations.size(), seconds,
      static_cast<double>(report.schedules) / seconds);
  for (const auto& violation : report.violations) {
    std::printf("VIOLATION (schedule %llu, %s): %s\n  replay with: %s\n",
                static_cast<unsigned long long>(violation.index),
                cells[violation.cell].name().c_str(), violation.violation.c_str(),
                violation.replay.c_str());
  }

  if (!args.json.empty()) {
    nlohmann::json out;
    out["benchmark"] = "sim_campaign";
    out["seed"] = args.seed;
    out["first"] = args.first;
    out["fence_topology"] = args.fences == FenceTopology::bruck ? "bruck" : "tree";
    out["schedules"] = report.schedules;
    out["events"] = report.events;
    out["deaths"] = report.deaths;
    out["returns"] = report.returns;
    out["joins"] = report.joins;
    out["jobs"] = args.jobs;
    out["wall_s"] = seconds;
    nlohmann::json cell_rows = nlohmann::json::array();
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const CampaignCell& cell = cells[i];
      cell_rows.push_back({{"radix", cell.radix},
                           {"radix2", cell.radix2},
                           {"daemons", {cell.min_daemons, cell.max_daemons}},
                           {"fault_share", {cell.min_fault_share, cell.max_fault_share}},
                           {"runs", report.runs_per_cell[i]},
                           {"violations", report.violations_per_cell[i]}});
    }
    out["cells"] = cell_rows;
    nlohmann::json violations = nlohmann::json::array();
    for (const auto& violation : report.violations) {
      violations.push_back({{"index", violation.index},
                            {"cell", cells[violation.cell].name()},
                            {"violation", violation.violation},
                            {"replay", violation.replay},
                            {"trace", violation.trace}});
    }
    out["violations"] = violations;
    std::ofstream(args.json) << out.dump(2) << "\n";
  }
  return report.violations.empty() ? 0 : 1;
}
