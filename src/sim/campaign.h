// A fault-schedule campaign: a fixed matrix of cells (radix pair x DVM size x
// fault load), each schedule drawn deterministically from (seed, index), so
// any schedule of any campaign can be replayed alone from its replay line.
// benchmarks/sim_campaign runs a million of them; CI runs a fixed sample.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace grove {

struct CampaignCell {
  std::uint32_t radix = 2;
  std::uint32_t radix2 = 2;
  std::uint32_t min_daemons = 5;
  std::uint32_t max_daemons = 16;
  // Faults as a share of the daemons: (min_share, max_share], 0/0 for none.
  double min_fault_share = 0;
  double max_fault_share = 0;
  std::string name() const;
};

// Radices 2..8 for both trees plus 64/4; DVMs of 5-16, 17-64 and 65-300
// daemons; no faults, up to an eighth, up to a quarter, up to half.
const std::vector<CampaignCell>& campaign_cells();

// Schedule `index` of the campaign started at `seed`: its cell is index modulo
// the cell count; every other choice (size, faults, jitter up to 10x alpha,
// 1-5 rounds, participation 0.1-1, payload, release delay on every daemon or
// only on the first victim, and in half the schedules returns of the dead
// and joins) is drawn from (seed, index). `fences` is every schedule's
// fence topology (the draws do not depend on it).
SimOptions campaign_schedule(std::uint64_t seed, std::uint64_t index,
                             FenceTopology fences = FenceTopology::tree);

struct CampaignViolation {
  std::uint64_t index = 0;
  std::size_t cell = 0;
  std::string violation;
  std::string replay;
  std::vector<std::string> trace;
};

struct CampaignReport {
  std::uint64_t schedules = 0;
  std::uint64_t events = 0;
  std::uint64_t deaths = 0;
  std::uint64_t returns = 0;  // dead daemons that came back at their vpid
  std::uint64_t joins = 0;    // daemons that joined past the end
  std::vector<std::uint64_t> runs_per_cell = std::vector<std::uint64_t>(campaign_cells().size());
  std::vector<std::uint64_t> violations_per_cell =
      std::vector<std::uint64_t>(campaign_cells().size());
  std::vector<CampaignViolation> violations;  // every one, in index order once sorted

  // Merges another slice's counts (violations are appended; sort by index after).
  void merge(CampaignReport&& other);
};

// Runs schedule `index` and counts it into `report`. A violation is run a
// second time with a trace, for the report. Single-threaded: a driver that
// wants more cores gives each thread its own report and merges them.
void run_campaign_schedule(std::uint64_t seed, std::uint64_t index, CampaignReport& report,
                           FenceTopology fences = FenceTopology::tree);

}  // namespace grove
