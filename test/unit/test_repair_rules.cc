// The seed's four repair bugs (8.7.2.6.1), each as the naive rule beside the
// rule grove uses, on the scenario that exposed it. The tree bug (two
// promotion rules) is in test_release_tree.cc; engine-level scenarios that
// pass with grove's rules are in test_engine.cc and the simulator tests.
#include <catch2/catch.hpp>

#include "grpcomm/repair_rules.h"
#include "rml/tree.h"

using namespace grove;

namespace {

// The scenario: 8 daemons, release radix 2, daemon 1 dead. 7 is promoted
// into 1's slot; 3 and 4 are its children now.
struct SeedScenario {
  Membership before = *Membership::create({0, 1, 2, 3, 4, 5, 6, 7});
  Membership after = before;
  SeedScenario() { after.apply({MembershipEventKind::departure, 1, 1}); }
  Tree old_tree() const { return Tree::derive(before, 2); }
  Tree new_tree() const { return Tree::derive(after, 2); }
};

bool naive_accepts_data_from(Vpid sender, std::optional<Vpid> my_parent) {
  return my_parent == sender;
}

std::vector<Vpid> naive_ack_targets(std::optional<Vpid> my_parent) {
  return my_parent ? std::vector<Vpid>{*my_parent} : std::vector<Vpid>{};
}

// A promoted daemon waits for its own parent's replay before replaying onward.
std::vector<Vpid> naive_forward_targets(const std::vector<Vpid>& children,
                                        const std::set<Vpid>& sent_to, bool promoted,
                                        bool parent_replayed_again) {
  if (promoted && !parent_replayed_again) return {};
  return forward_targets(children, sent_to);
}

}  // namespace

TEST_CASE("bug 2: screening on 'is the sender my parent' discards the replay", "[repair]") {
  SeedScenario s;
  // 7 replays to 3 under the new tree; 3 has not heard the notice yet.
  Vpid sender = *s.new_tree().parent(3);
  REQUIRE(sender == 7);
  std::optional<Vpid> parent_in_3s_view = s.old_tree().parent(3);
  REQUIRE(parent_in_3s_view == Vpid{1});
  CHECK_FALSE(naive_accepts_data_from(sender, parent_in_3s_view));  // 3 is never released
  // grove takes data from anyone; test_rule_weakening.cc shows the screen hangs releases.
}

TEST_CASE("bug 3: acking the current parent instead of the asker hangs the asker", "[repair]") {
  SeedScenario s;
  // 3, still on the old view, got the data from 7 and its subtree is complete.
  std::set<Vpid> requesters{7};
  auto naive = naive_ack_targets(s.old_tree().parent(3));
  CHECK(naive == std::vector<Vpid>{1});  // the dead daemon: 7 waits forever
  CHECK(ack_targets(requesters, {}) == std::vector<Vpid>{7});
  // Answered once, not again; a new asker is answered too.
  CHECK(ack_targets({7, 0}, {7}) == std::vector<Vpid>{0});
}

TEST_CASE("bug 4: a promoted daemon deferring to its parent strands its subtree", "[repair]") {
  SeedScenario s;
  Tree tree = s.new_tree();
  REQUIRE(tree.promoted(7));
  auto children = tree.children(7);
  REQUIRE(children == std::vector<Vpid>{3, 4});
  // 0 already replayed to 7 once (that is how 7 got it); no second replay is coming.
  CHECK(naive_forward_targets(children, {}, /*promoted=*/true,
                              /*parent_replayed_again=*/false)
            .empty());
  CHECK(forward_targets(children, {}) == std::vector<Vpid>{3, 4});
  CHECK(forward_targets(children, {3}) == std::vector<Vpid>{4});
}

TEST_CASE("bug 5: reading a forward under an older view retires it unforwarded", "[repair]") {
  SeedScenario s;
  // 7 has not heard of 1's death (version 0); 0 replays with version 1. On
  // 7's old view 7 is a leaf, so deriving now would ack at once and strand 3, 4.
  CHECK(s.old_tree().children(7).empty());
  CHECK(s.new_tree().children(7) == std::vector<Vpid>{3, 4});
  std::optional<Vpid> parent_in_7s_view = s.old_tree().parent(7);
  REQUIRE(parent_in_7s_view == Vpid{3});
  CHECK(must_park(1, 0, 0, parent_in_7s_view));
  // Both conditions are load-bearing: ordinary traffic from the parent, or
  // from a sender that is not ahead, is never parked.
  CHECK_FALSE(must_park(1, 0, 3, parent_in_7s_view));
  CHECK_FALSE(must_park(1, 1, 0, parent_in_7s_view));
}

TEST_CASE("rule 6: an ack vouches only for the subtree it was made for", "[repair]") {
  SeedScenario s;
  Tree before = s.old_tree();
  Tree after = s.new_tree();
  // 7 acks before hearing of 1's death: from its old slot, a leaf there.
  AckStamp from_old_slot{0, *before.slot(7)};
  REQUIRE(from_old_slot.slot == 7);
  REQUIRE(after.slot(7) == 1u);  // its parent 0 now counts on it for slot 1: 3, 4 and theirs
  CHECK_FALSE(ack_vouches(from_old_slot, 1, 0, after.slot(7)));
  // The same daemon, having heard: its new slot, in the parent's epoch.
  CHECK(ack_vouches(AckStamp{1, 1}, 1, 0, after.slot(7)));
  // From an epoch the parent has not reached: kept aside, not counted yet.
  CHECK_FALSE(ack_vouches(AckStamp{2, 1}, 1, 0, after.slot(7)));
  // A daemon that did not move: its earlier ack covers its (only smaller) subtree.
  REQUIRE(before.slot(2) == after.slot(2));
  CHECK(ack_vouches(AckStamp{0, *before.slot(2)}, 1, 0, after.slot(2)));
  // A daemon that is no longer in the tree vouches for nothing.
  CHECK_FALSE(ack_vouches(AckStamp{0, 1}, 1, 0, after.slot(1)));
}

TEST_CASE("rule 7: a return voids every ack made before it", "[repair]") {
  // Radix 2 over 0..7: slot 1 has children 3 and 4, slot 3 has child 7.
  Membership membership = *Membership::create({0, 1, 2, 3, 4, 5, 6, 7});
  membership.apply({MembershipEventKind::departure, 1, 1});
  const Tree departed = Tree::derive(membership, 2);
  // 7, the deepest of slot 1's subtree, stands in for 1; slot 3 is 3 alone.
  REQUIRE(departed.slot(7) == 1u);
  REQUIRE(departed.subtree(3) == std::vector<Vpid>{3});
  membership.apply({MembershipEventKind::return_, 1, 2});
  const Tree returned = Tree::derive(membership, 2);
  REQUIRE(membership.return_epoch() == 2);
  // 1 takes its slot back and 7 goes home, under 3: a slot's subtree gained a
  // member, so an ack 3 made before the return does not cover what 3 holds now.
  CHECK(returned.slot(1) == 1u);
  CHECK(returned.subtree(3) == std::vector<Vpid>{3, 7});
  const AckStamp before_return{1, *departed.slot(3)};
  // Rule 6 alone would count it (same slot, an earlier epoch)...
  CHECK(ack_vouches(before_return, 2, 0, returned.slot(3)));
  // ...rule 7 does not: it was made before the newest return.
  CHECK_FALSE(ack_vouches(before_return, 2, membership.return_epoch(), returned.slot(3)));
  CHECK(ack_vouches(AckStamp{2, 3}, 2, membership.return_epoch(), returned.slot(3)));
  // Departures after the return are rule 6's again: subtrees only shrink.
  membership.apply({MembershipEventKind::departure, 5, 3});
  CHECK(ack_vouches(AckStamp{2, 3}, 3, membership.return_epoch(),
                    Tree::derive(membership, 2).slot(3)));
}
