// For tests of PMI_process_mapping on real daemons: whether a mapping, read
// MPICH's way, groups ranks into nodes exactly as `labels` (rank -> a label
// of where it ran: its host, or its daemon's node attribute) do.
#pragma once

#include <map>
#include <string>

#include "pmi/process_mapping.h"

namespace grove::test {

inline bool mapping_matches(const std::string& mapping, const std::map<int, std::string>& labels) {
  const auto blocks = pmi::parse_mapping(mapping);
  if (!blocks) return false;
  const auto nodes = pmi::expand_mapping(*blocks, static_cast<std::uint32_t>(labels.size()));
  if (nodes.size() != labels.size()) return false;
  for (const auto& [r, label_r] : labels) {
    for (const auto& [s, label_s] : labels) {
      if ((nodes[r] == nodes[s]) != (label_r == label_s)) return false;
    }
  }
  return true;
}

}  // namespace grove::test
