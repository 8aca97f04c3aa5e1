// Exhaustive checks of the tree derivation: every failure subset that keeps the
// controller alive, for small radices and daemon counts, with and without vpid
// holes. These are the cheapest guard against the seed's first repair bug.
#include <catch2/catch.hpp>

#include <algorithm>

#include "rml/membership.h"
#include "rml/topology.h"
#include "rml/tree.h"
#include "rml/tree_validate.h"

using namespace grove;

namespace {

Membership with_failures(const std::vector<Vpid>& daemons, std::uint64_t mask) {
  Membership membership = *Membership::create(daemons);
  std::uint64_t epoch = 0;
  for (std::size_t i = 1; i < daemons.size(); ++i) {
    if ((mask >> i) & 1U) {
      membership.apply({MembershipEventKind::departure, daemons[i], ++epoch});
    }
  }
  return membership;
}

std::vector<Vpid> dense(std::size_t count) {
  std::vector<Vpid> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<Vpid>(i);
  return out;
}

// A daemon set with holes, as an elastic shrink leaves: 0, 2, 3, 5, 8, 9, 11, ...
std::vector<Vpid> holey(std::size_t count) {
  std::vector<Vpid> out{0};
  Vpid next = 2;
  while (out.size() < count) {
    out.push_back(next);
    next += (out.size() % 3 == 0) ? 3 : 1;
  }
  return out;
}

// Visits every failure subset of daemons[1..] (bit i = daemons[i] failed).
template <typename Visit>
void for_each_failure_subset(const std::vector<Vpid>& daemons, Visit visit) {
  const std::uint64_t subsets = std::uint64_t{1} << (daemons.size() - 1);
  for (std::uint64_t bits = 0; bits < subsets; ++bits)
    visit(with_failures(daemons, bits << 1));
}

}  // namespace

TEST_CASE("test_release_tree: every failure subset yields one tree over the living", "[tree]") {
  for (std::uint32_t radix : {2u, 3u, 4u}) {
    for (std::size_t count = 1; count <= 13; ++count) {
      for (const auto& daemons : {dense(count), holey(count)}) {
        for_each_failure_subset(daemons, [&](const Membership& membership) {
          Tree tree = Tree::derive(membership, radix);
          auto status = validate_tree(tree, membership);
          if (!status) {
            INFO("radix " << radix << " daemons " << count << " failed "
                          << membership.failed().size() << ": " << status.error().message);
            FAIL();
          }
        });
      }
    }
  }
}

TEST_CASE("larger radices and counts stay valid under sampled failures", "[tree]") {
  // Exhaustive for radix 5..8 at 11 daemons, then single and double failures up to 300.
  for (std::uint32_t radix : {5u, 6u, 7u, 8u, 64u}) {
    for_each_failure_subset(dense(11), [&](const Membership& membership) {
      REQUIRE(validate_tree(Tree::derive(membership, radix), membership));
    });
  }
  for (std::uint32_t radix : {2u, 3u, 4u, 64u}) {
    for (std::size_t count : {64u, 65u, 100u, 257u, 300u}) {
      auto daemons = dense(count);
      for (std::size_t a = 1; a < count; a += 7) {
        for (std::size_t b = a; b < count; b += 13) {
          Membership membership = *Membership::create(daemons);
          membership.apply({MembershipEventKind::departure, static_cast<Vpid>(a), 1});
          membership.apply({MembershipEventKind::departure, static_cast<Vpid>(b), 2});
          auto status = validate_tree(Tree::derive(membership, radix), membership);
          INFO("radix " << radix << " count " << count << " failed " << a << "," << b);
          REQUIRE(status);
        }
      }
    }
  }
}

TEST_CASE("test_release_tree_matches_routing: equal radices give identical trees", "[tree]") {
  for (std::uint32_t radix : {2u, 3u, 4u}) {
    TopologyRadices radices{radix, radix};
    for (std::size_t count = 1; count <= 12; ++count) {
      for (const auto& daemons : {dense(count), holey(count)}) {
        for_each_failure_subset(daemons, [&](const Membership& membership) {
          Tree routing = derive_topology(membership, TopologyKind::routing, radices);
          Tree release = derive_topology(membership, TopologyKind::release, radices);
          for (Vpid vpid : daemons) {
            REQUIRE(routing.parent(vpid) == release.parent(vpid));
            REQUIRE(routing.children(vpid) == release.children(vpid));
          }
        });
      }
    }
  }
}

TEST_CASE("routed next hops follow tree edges and terminate for every pair", "[tree]") {
  for (std::uint32_t radix : {2u, 3u, 4u, 64u}) {
    for (std::size_t count : {2u, 5u, 9u, 10u}) {
      for (const auto& daemons : {dense(count), holey(count)}) {
        for_each_failure_subset(daemons, [&](const Membership& membership) {
          Tree tree = Tree::derive(membership, radix);
          std::vector<Vpid> living = tree.members();
          for (Vpid source : living) {
            for (Vpid target : living) {
              Vpid at = source;
              std::size_t hops = 0;
              while (at != target) {
                auto next = tree.next_hop(at, target);
                REQUIRE(next);
                bool edge = tree.parent(at) == *next || tree.parent(*next) == at;
                REQUIRE(edge);
                at = *next;
                // A tree path is at most depth(source) + depth(target) long.
                REQUIRE(++hops <= *tree.depth(source) + *tree.depth(target));
              }
            }
          }
        });
      }
    }
  }
}

TEST_CASE("next hop toward a dead or unknown daemon is refused", "[tree]") {
  Membership membership = *Membership::create(dense(6));
  membership.apply({MembershipEventKind::departure, 3, 1});
  Tree tree = Tree::derive(membership, 2);
  CHECK_FALSE(tree.next_hop(0, 3));
  CHECK_FALSE(tree.next_hop(3, 0));
  CHECK_FALSE(tree.next_hop(0, 99));
  CHECK_FALSE(tree.next_hop(2, 2));
}

TEST_CASE("the seed's example: eight daemons, radix 2, daemon 1 dead", "[tree]") {
  Membership membership = *Membership::create(dense(8));
  membership.apply({MembershipEventKind::departure, 1, 1});
  Tree tree = Tree::derive(membership, 2);
  REQUIRE(validate_tree(tree, membership));
  // Slot 1 is taken by 7, the highest daemon of 1's subtree, a leaf whose slot empties.
  CHECK(tree.children(0) == std::vector<Vpid>{7, 2});
  CHECK(tree.children(7) == std::vector<Vpid>{3, 4});
  CHECK(tree.children(3).empty());
  CHECK(tree.parent(3) == Vpid{7});
  CHECK(tree.parent(4) == Vpid{7});
  CHECK(tree.parent(7) == Vpid{0});
  CHECK(tree.promoted(7));
  CHECK_FALSE(tree.promoted(3));
  CHECK(*tree.depth(3) == 2u);
}

namespace {

// The first repair bug of the seed, kept as a reference: the parent found by
// walking up past dead ancestors, the children by replacing a dead child in
// place with its last living child. Two promotion rules, so they can disagree.
std::optional<Vpid> naive_parent(const Membership& membership, Vpid vpid, std::uint32_t radix) {
  if (vpid == 0) return std::nullopt;
  Vpid up = (vpid - 1) / radix;
  while (membership.is_failed(up))
    up = (up - 1) / radix;
  return up;
}

std::optional<Vpid> naive_inheritor(const Membership& membership, Vpid dead, std::uint32_t radix) {
  for (std::uint64_t child = std::uint64_t{dead} * radix + radix; child > dead * radix; --child) {
    if (child >= membership.size()) continue;
    auto vpid = static_cast<Vpid>(child);
    if (!membership.is_failed(vpid)) return vpid;
    if (auto deeper = naive_inheritor(membership, vpid, radix)) return deeper;
  }
  return std::nullopt;
}

std::vector<Vpid> naive_children(const Membership& membership, Vpid vpid, std::uint32_t radix) {
  std::vector<Vpid> out;
  for (std::uint64_t child = std::uint64_t{vpid} * radix + 1;
       child <= std::uint64_t{vpid} * radix + radix && child < membership.size(); ++child) {
    auto id = static_cast<Vpid>(child);
    if (!membership.is_failed(id)) {
      out.push_back(id);
    } else if (auto heir = naive_inheritor(membership, id, radix)) {
      out.push_back(*heir);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the naive two-rule repair leaves daemon 3 in no tree (seed bug 1)", "[tree]") {
  Membership membership = *Membership::create(dense(8));
  membership.apply({MembershipEventKind::departure, 1, 1});
  // The naive rule: 4 inherits slot 1, so 0's children are {4, 2}; 3 walks up to 0.
  CHECK(naive_children(membership, 0, 2) == std::vector<Vpid>{4, 2});
  CHECK(naive_parent(membership, 3, 2) == Vpid{0});
  auto roots_children = naive_children(membership, 0, 2);
  bool three_is_child_of_its_parent =
      std::find(roots_children.begin(), roots_children.end(), 3) != roots_children.end();
  CHECK_FALSE(three_is_child_of_its_parent);  // the disagreement: 3 is in no tree
  // The derivation grove uses has one rule, so 3 is a child of its parent.
  Tree tree = Tree::derive(membership, 2);
  auto parent = tree.parent(3);
  REQUIRE(parent);
  auto siblings = tree.children(*parent);
  CHECK(std::find(siblings.begin(), siblings.end(), 3) != siblings.end());
}

TEST_CASE("a single failure re-parents only the dead daemon's children and its heir", "[tree]") {
  for (std::uint32_t radix : {2u, 3u, 4u, 64u}) {
    for (std::size_t count : {10u, 64u, 65u, 257u}) {
      Membership healthy = *Membership::create(dense(count));
      Tree before = Tree::derive(healthy, radix);
      for (Vpid dead = 1; dead < count; ++dead) {
        Membership membership = *Membership::create(dense(count));
        membership.apply({MembershipEventKind::departure, dead, 1});
        Tree after = Tree::derive(membership, radix);
        auto orphans = before.children(dead);
        std::size_t moved = 0;
        for (Vpid vpid = 1; vpid < count; ++vpid) {
          if (vpid == dead || before.parent(vpid) == after.parent(vpid)) continue;
          ++moved;
          bool orphan = std::find(orphans.begin(), orphans.end(), vpid) != orphans.end();
          INFO("radix " << radix << " count " << count << " dead " << dead << " moved " << vpid);
          REQUIRE((orphan || after.promoted(vpid)));
        }
        CHECK(moved <= orphans.size() + 1);
      }
    }
  }
}

TEST_CASE("tree version grows with every departure and return, never back", "[membership]") {
  Membership membership = *Membership::create(dense(5));
  CHECK(membership.tree_version() == 0);
  CHECK(membership.apply({MembershipEventKind::departure, 2, 1}));
  CHECK(membership.tree_version() == 1);
  CHECK(membership.is_failed(2));
  CHECK(membership.apply({MembershipEventKind::return_, 2, 2}));
  CHECK(membership.tree_version() == 2);  // a return does not make it go down
  CHECK_FALSE(membership.is_failed(2));
  CHECK(membership.apply({MembershipEventKind::departure, 2, 3}));
  CHECK(membership.tree_version() == 3);
  CHECK(membership.epoch() == 3);
  // Stale notices (epoch not newer) change nothing.
  CHECK_FALSE(membership.apply({MembershipEventKind::return_, 2, 3}));
  CHECK_FALSE(membership.apply({MembershipEventKind::departure, 4, 2}));
  CHECK(membership.tree_version() == 3);
  CHECK(membership.is_failed(2));
  CHECK_FALSE(membership.is_failed(4));
  // A repeated departure adopts the epoch but is no new event.
  CHECK_FALSE(membership.apply({MembershipEventKind::departure, 2, 4}));
  CHECK(membership.epoch() == 4);
  CHECK(membership.tree_version() == 3);
  // The controller never departs; unknown vpids are ignored.
  CHECK_FALSE(membership.apply({MembershipEventKind::departure, 0, 5}));
  CHECK_FALSE(membership.apply({MembershipEventKind::departure, 77, 6}));
  CHECK(membership.alive_count() == 4);
}

TEST_CASE("adopting a whole failed set counts its departures and returns", "[membership]") {
  // With holes (vpids are not their own index) and without.
  for (std::vector<Vpid> daemons : {dense(8), std::vector<Vpid>{0, 3, 5, 9, 12, 40}}) {
    Membership membership = *Membership::create(daemons);
    const Vpid a = daemons[1], b = daemons[3], c = daemons[4];
    std::vector<Vpid> failed{b, a};  // any order, duplicates allowed
    failed.push_back(a);
    CHECK(membership.adopt(1, failed));
    CHECK(membership.tree_version() == 2);
    CHECK(membership.failed() == std::vector<Vpid>{a, b});
    CHECK(membership.failed_indices() == std::vector<std::uint32_t>{1, 3});
    CHECK(membership.alive_count() == daemons.size() - 2);
    // a returns, c departs: two changes; the controller and strangers are ignored.
    std::vector<Vpid> next{c, b, 0, 1000};
    CHECK(membership.adopt(2, next));
    CHECK(membership.tree_version() == 4);
    CHECK(membership.failed() == std::vector<Vpid>{b, c});
    CHECK_FALSE(membership.is_failed(a));
    CHECK(membership.is_failed(c));
    // The same set again, or a stale epoch: nothing changes.
    CHECK_FALSE(membership.adopt(3, next));
    CHECK_FALSE(membership.adopt(1, std::vector<Vpid>{}));
    CHECK(membership.tree_version() == 4);
    CHECK(membership.dense() == (daemons.back() == daemons.size() - 1));
  }
}

TEST_CASE("membership rejects malformed daemon sets", "[membership]") {
  CHECK_FALSE(Membership::create({}));
  CHECK_FALSE(Membership::create({1, 2, 3}));
  CHECK_FALSE(Membership::create({0, 2, 2}));
  auto holes = Membership::create({9, 0, 4});
  REQUIRE(holes);
  CHECK(holes->daemons()[1] == 4);
  CHECK(*holes->index_of(9) == 2u);
  CHECK_FALSE(holes->index_of(5));
}

TEST_CASE("a join grows the daemon set without moving anyone; a return clears a failure",
          "[membership]") {
  Membership controller = *Membership::create(dense(6));
  controller.apply({MembershipEventKind::departure, 2, 1});
  const Tree before = Tree::derive(controller, 2);
  // Vpid 8 joins: 6 and 7 were never started, so they are failed, and the
  // tree of the living is the old one plus the newcomer.
  CHECK(controller.apply({MembershipEventKind::return_, 8, 2}));
  CHECK(controller.vpid_end() == 9);
  CHECK(controller.failed() == std::vector<Vpid>{2, 6, 7});
  CHECK(controller.is_alive(8));
  CHECK(controller.incarnation(8) == 2);
  CHECK(controller.return_epoch() == 2);
  const Tree after = Tree::derive(controller, 2);
  for (Vpid vpid : {0u, 1u, 3u, 4u, 5u}) {
    INFO("vpid " << vpid);
    CHECK(before.slot(vpid) == after.slot(vpid));
  }
  CHECK(after.contains(8));
  // 2 comes back at its vpid: a new incarnation, the failure cleared.
  CHECK(controller.apply({MembershipEventKind::return_, 2, 3}));
  CHECK(controller.incarnation(2) == 3);
  CHECK(controller.return_epoch() == 3);
  CHECK(controller.failed() == std::vector<Vpid>{6, 7});
  CHECK(controller.tree_version() == 3);

  // A daemon that saw none of it adopts the whole view at once: the same
  // set, failures and incarnations, and the controller's tree version.
  std::vector<Incarnation> incarnations = controller.incarnations();
  Membership late = *Membership::create(dense(6));
  CHECK(late.adopt(3, controller.failed(), controller.vpid_end(), incarnations,
                   controller.tree_version()));
  CHECK(late.daemons().size() == 9);
  CHECK(late.failed() == controller.failed());
  CHECK(late.incarnations() == controller.incarnations());
  CHECK(late.tree_version() == controller.tree_version());
  CHECK(late.return_epoch() == 3);
  // The same without the controller's count: a departure and a return seen
  // together count as one return, not two events; counts taken as they come
  // would disagree, which is why notices carry the controller's.
  Membership counting = *Membership::create(dense(6));
  counting.apply({MembershipEventKind::departure, 2, 1});
  CHECK(counting.adopt(3, controller.failed(), controller.vpid_end(), incarnations));
  CHECK(counting.tree_version() != controller.tree_version());
  // A hole inside the set stays a hole; a stale view changes nothing.
  CHECK_FALSE(late.adopt(2, std::vector<Vpid>{}, 20));
  CHECK(late.vpid_end() == 9);
  // Views no controller sends are refused whole, before anything grows: a
  // set past kMaxVpidEnd, an incarnation newer than its epoch, a join at the
  // last vpid (whose end would wrap).
  CHECK_FALSE(late.adopt(4, std::vector<Vpid>{}, kMaxVpidEnd + 1));
  std::vector<Incarnation> future{{2, 9}};
  CHECK_FALSE(late.adopt(5, std::vector<Vpid>{}, 9, future));
  CHECK(late.epoch() == 3);
  CHECK(late.incarnation(2) == 3);
  CHECK_FALSE(late.apply({MembershipEventKind::return_, UINT32_MAX, 6}));
  CHECK_FALSE(late.apply({MembershipEventKind::return_, kMaxVpidEnd, 6}));
  CHECK(late.vpid_end() == 9);
}
