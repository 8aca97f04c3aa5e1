#include "sim/campaign.h"

#include <algorithm>
#include <cmath>

#include "sim/replay_line.h"
#include "util/random_stream.h"

namespace grove {

std::string CampaignCell::name() const {
  std::string faults =
      max_fault_share == 0
          ? "no faults"
          : "faults <= " + std::to_string(static_cast<int>(max_fault_share * 100 + 0.5)) + "%";
  return "radix " + std::to_string(radix) + "/" + std::to_string(radix2) + ", " +
         std::to_string(min_daemons) + "-" + std::to_string(max_daemons) + " daemons, " + faults;
}

const std::vector<CampaignCell>& campaign_cells() {
  static const std::vector<CampaignCell> cells = [] {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> radices;
    for (std::uint32_t radix = 2; radix <= 8; ++radix) {
      for (std::uint32_t radix2 = 2; radix2 <= 8; ++radix2)
        radices.emplace_back(radix, radix2);
    }
    radices.emplace_back(64, 4);
    const std::pair<std::uint32_t, std::uint32_t> sizes[] = {{5, 16}, {17, 64}, {65, 300}};
    const std::pair<double, double> loads[] = {{0, 0}, {0, 0.125}, {0.125, 0.25}, {0.25, 0.5}};
    std::vector<CampaignCell> out;
    for (auto [radix, radix2] : radices) {
      for (auto [low, high] : sizes) {
        for (auto [min_share, max_share] : loads)
          out.push_back(CampaignCell{radix, radix2, low, high, min_share, max_share});
      }
    }
    return out;
  }();
  return cells;
}

SimOptions campaign_schedule(std::uint64_t seed, std::uint64_t index, FenceTopology fences) {
  const auto& cells = campaign_cells();
  const CampaignCell& cell = cells[index % cells.size()];
  // One stream per schedule, split from the campaign's seed under a name
  // that carries the index, so a schedule does not depend on which thread
  // ran it or what ran before, and is the same on every standard library
  // (util/random_stream.h). The run itself draws from its own seed.
  RandomStream stream = RandomStream::split(seed, "campaign " + std::to_string(index));
  auto uniform = [&](std::uint64_t low, std::uint64_t high) { return stream.uniform(low, high); };
  SimOptions options;
  // Log-uniform within the cell (as many DVMs of 65-130 daemons as of
  // 130-260), in integers: a size drawn uniformly is kept with probability
  // min/size, so size d comes up in proportion to 1/d.
  do {
    options.daemons = static_cast<std::uint32_t>(uniform(cell.min_daemons, cell.max_daemons));
  } while (stream.below(options.daemons) >= cell.min_daemons);
  options.radices = {cell.radix, cell.radix2};
  if (cell.max_fault_share > 0) {
    // At least one fault, at most half the daemons, never the controller.
    const double n = options.daemons;
    auto low = static_cast<std::uint64_t>(std::floor(n * cell.min_fault_share)) + 1;
    auto high = std::max<std::uint64_t>(low, static_cast<std::uint64_t>(n * cell.max_fault_share));
    high = std::min<std::uint64_t>(high, options.daemons - 1);
    low = std::min(low, high);
    options.random_faults = static_cast<std::uint32_t>(uniform(low, high));
  }
  options.low_radix_release = uniform(0, 9) != 0;
  options.rounds = static_cast<std::uint32_t>(uniform(1, 5));
  const std::uint64_t payloads[] = {33, 256, 5000, 40000};
  options.payload_bytes = payloads[uniform(0, 3)];
  options.network.jitter = static_cast<double>(uniform(0, 100)) / 10.0;  // 0 to 10x alpha
  options.participant_fraction = static_cast<double>(uniform(10, 100)) / 100.0;
  switch (uniform(0, 2)) {
    case 0:
      break;
    case 1:  // the first victim holds every release: its subtree is the last to finish
      options.release_delay_ns = 150'000;
      options.release_delay_target = -2;
      break;
    default:
      options.release_delay_ns = 150'000;
      options.release_delay_target = -1;
      break;
  }
  // Membership that moves both ways, in half the schedules: up to four of
  // the dead come back at their vpids, and up to four newcomers (an eighth
  // of a small DVM) join past the end, while the rounds run. Each return
  // voids every ack made before it (rule 7), so every daemon answers again
  // for what it holds: more would cost the campaign its pace, not find more.
  if (stream.below(2) == 1) {
    options.returns = static_cast<std::uint32_t>(uniform(0, std::min(4U, options.random_faults)));
    options.joins = static_cast<std::uint32_t>(uniform(0, std::clamp(options.daemons / 8, 1U, 4U)));
  }
  // Fence-release acks that share frames, in half the schedules: from a
  // fraction of a release's span to many spans (the repairs must hold
  // whatever an ack waits). Drawn last: the draws above are as before.
  if (stream.below(2) == 1) options.ack_delay_ns = uniform(1, 400) * 1000;
  options.fence_topology = fences;
  options.check_engines = true;
  options.trace_lines = 0;  // a violation is replayed with its trace
  options.seed = seed + index;
  return options;
}

void CampaignReport::merge(CampaignReport&& other) {
  schedules += other.schedules;
  events += other.events;
  deaths += other.deaths;
  returns += other.returns;
  joins += other.joins;
  for (std::size_t i = 0; i < runs_per_cell.size(); ++i) {
    runs_per_cell[i] += other.runs_per_cell[i];
    violations_per_cell[i] += other.violations_per_cell[i];
  }
  for (auto& violation : other.violations)
    violations.push_back(std::move(violation));
}

void run_campaign_schedule(std::uint64_t seed, std::uint64_t index, CampaignReport& report,
                           FenceTopology fences) {
  const std::size_t cell = index % campaign_cells().size();
  SimOptions options = campaign_schedule(seed, index, fences);
  SimResult result = run_simulation(options);
  ++report.runs_per_cell[cell];
  ++report.schedules;
  report.events += result.events;
  report.deaths += result.killed.size();
  report.returns += result.returned.size();
  report.joins += result.joined.size();
  if (result.ok) return;
  ++report.violations_per_cell[cell];
  options.trace_lines = 60;
  SimResult traced = run_simulation(options);
  report.violations.push_back(
      CampaignViolation{index, cell, result.violation, replay_command(options), traced.trace});
}

}  // namespace grove
