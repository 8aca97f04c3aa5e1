// A validator that re-derives what a tree must satisfy: parent and children
// agree, and together they form exactly one tree rooted at the controller
// covering exactly the living daemons. Tests run it on every failure subset;
// the simulator runs it on every repair.
#pragma once

#include "rml/membership.h"
#include "rml/tree.h"
#include "util/result.h"

namespace grove {

Status validate_tree(const Tree& tree, const Membership& membership);

}  // namespace grove
