// The engine's repair rules are load-bearing: weakened to their naive forms
// (repair_rules.h), schedules break invariants the simulator checks. Rules 2
// and 4, the ack's subtree, rule 7 and the joined-late rule each break
// alone; parking (property 5) is now
// an economy that the ack rule backs up, so it breaks only together with it,
// and alone it costs frames. Property 1 (one derivation) is structural and
// checked exhaustively in test_release_tree.cc; property 3 is discussed in
// docs/engine.md. The Bruck exchange's four rules each break alone. See the
// same file for the rule each test stands for.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "sim/campaign.h"
#include "sim/replay_line.h"

using namespace grove;

namespace {

constexpr std::uint64_t kSeed = 20261130;

// Schedules to try: the regression seeds first, then the campaign's fault
// schedules from index 0.
// With Bruck fences, only the campaign's schedules (the seeds are the trees').
std::vector<SimOptions> schedules(std::uint64_t campaign_count,
                                  FenceTopology fences = FenceTopology::tree) {
  std::vector<SimOptions> out;
  std::ifstream file(GROVE_SIM_REGRESSION_SEEDS);
  std::string line;
  while (fences == FenceTopology::tree && std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto options = parse_replay_arguments(line);
    if (options.ok()) out.push_back(*options);
  }
  for (std::uint64_t index = 0; index < campaign_count; ++index) {
    SimOptions options = campaign_schedule(kSeed, index, fences);
    if (options.random_faults > 0) out.push_back(options);  // rules matter only under repair
  }
  return out;
}

void check_caught(RepairRules weakened, FenceTopology fences = FenceTopology::tree) {
  for (SimOptions options : schedules(3000, fences)) {
    options.weakened_rules = weakened;
    SimResult result = run_simulation(options);
    if (result.ok) continue;
    INFO("caught: " << result.violation << "\n  replay: " << replay_command(options));
    options.weakened_rules = RepairRules{};
    CHECK(run_simulation(options).ok);  // the same schedule holds with every rule in force
    SUCCEED();
    return;
  }
  FAIL("no schedule caught the weakened rules");
}

}  // namespace

TEST_CASE("without property 2 (take data from anyone) a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::accept_any_sender));
}

TEST_CASE("without property 4 (replay at once) a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::replay_at_once));
}

TEST_CASE("without the ack's subtree (epoch and slot) a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::ack_names_subtree));
}

TEST_CASE("without parking and the ack's subtree together a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::park_when_behind).add(RepairRule::ack_names_subtree));
}

TEST_CASE("parking alone saves the frames a daemon would send under its old view", "[sim][rules]") {
  std::uint64_t with_parking = 0, without = 0;
  for (SimOptions options : schedules(600)) {
    with_parking += run_simulation(options).traffic.total().frames;
    options.weakened_rules.add(RepairRule::park_when_behind);
    SimResult weakened = run_simulation(options);
    CHECK(weakened.ok);  // the ack rule keeps it safe
    without += weakened.traffic.total().frames;
  }
  CHECK(without > with_parking);
}

// Rule 7: after a return or a join no ack made before it vouches. Weakened,
// an ack from before a return counts for a subtree that has since gained a
// member (the returner, or a stand-in sent home under it), and a parent that
// sent to the returner's predecessor does not send again.
TEST_CASE("without rule 7 (a return voids older acks) a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::void_acks_on_return));
}

// The joined-late rule: a daemon that comes back or joins starts from the
// controller's rounds. Weakened, it starts from none, and a signature whose
// rounds all ended before it came is unknown to it while every other daemon
// knows it: it would stamp round 1 where the others are at k.
TEST_CASE("without the joined-late rule (seed the rounds) a schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::seed_joiners));
}

// The Bruck exchange (grpcomm/bruck_fence.cc, docs/engine.md). Weakened, a
// frame of a run before a death counts in the run after it, whose members
// and blocks differ: a daemon ends the round without a member's block, or
// waits for a frame that already came.
TEST_CASE("without dropping an older run's frames a Bruck schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::bruck_drop_stale), FenceTopology::bruck);
}

// Weakened, a run survives a death: its members wait for the dead's rounds.
TEST_CASE("without a new run in a new epoch a Bruck schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::bruck_restart), FenceTopology::bruck);
}

// Weakened, a daemon that ended the round ignores the run a death started
// after it: the others wait for its block for ever.
TEST_CASE("without the rejoin of those that ended a Bruck schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::bruck_rejoin), FenceTopology::bruck);
}

// Weakened, a contribution of a member that died travels only as its own
// block, which no run after its death has: those that held it end the
// round ok, the others participant-lost.
TEST_CASE("without carrying the dead's contributions a Bruck schedule breaks", "[sim][rules]") {
  check_caught(RepairRules{}.add(RepairRule::bruck_carry_outsiders), FenceTopology::bruck);
}
