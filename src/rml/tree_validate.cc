#include "rml/tree_validate.h"

#include <algorithm>
#include <string>
#include <vector>

namespace grove {

Status validate_tree(const Tree& tree, const Membership& membership) {
  auto fail = [](std::string what) -> Status { return Error{std::move(what)}; };
  const auto daemons = membership.daemons();
  if (tree.root() != kControllerVpid || !tree.contains(kControllerVpid)) {
    return fail("the root is not the living controller");
  }
  if (tree.parent(kControllerVpid)) return fail("the root has a parent");
  std::size_t living = 0;
  for (Vpid vpid : daemons) {
    bool alive = !membership.is_failed(vpid);
    if (alive != tree.contains(vpid)) {
      return fail("daemon " + std::to_string(vpid) +
                  (alive ? " is alive but in no tree" : " is failed but in the tree"));
    }
    if (!alive) continue;
    ++living;
    for (Vpid child : tree.children(vpid)) {
      if (tree.parent(child) != vpid) {
        return fail("daemon " + std::to_string(child) + " is a child of " + std::to_string(vpid) +
                    " but names another parent");
      }
    }
    if (auto parent = tree.parent(vpid)) {
      auto siblings = tree.children(*parent);
      if (std::find(siblings.begin(), siblings.end(), vpid) == siblings.end()) {
        return fail("daemon " + std::to_string(vpid) + " names parent " + std::to_string(*parent) +
                    " which does not list it as a child");
      }
    } else if (vpid != kControllerVpid) {
      return fail("living daemon " + std::to_string(vpid) + " has no parent");
    }
  }
  // Walk down from the root: each living daemon reached exactly once.
  std::vector<Vpid> frontier{kControllerVpid};
  std::vector<bool> seen(daemons.size(), false);
  std::size_t reached = 0;
  while (!frontier.empty()) {
    Vpid next = frontier.back();
    frontier.pop_back();
    std::size_t index = *membership.index_of(next);
    if (seen[index]) return fail("daemon " + std::to_string(next) + " is reached twice");
    seen[index] = true;
    ++reached;
    for (Vpid child : tree.children(next))
      frontier.push_back(child);
  }
  if (reached != living || tree.member_count() != living) {
    return fail("the tree covers " + std::to_string(reached) + " daemons, expected " +
                std::to_string(living));
  }
  return ok_status();
}

}  // namespace grove
