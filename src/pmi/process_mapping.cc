#include "pmi/process_mapping.h"

#include <charconv>
#include <map>

namespace grove::pmi {
namespace {

// Runs of ranks on one node, merged where the nodes follow each other with
// runs of equal length.
std::vector<MappingBlock> runs_of(const std::vector<std::uint32_t>& node_of_rank) {
  std::vector<MappingBlock> runs;
  for (std::size_t rank = 0; rank < node_of_rank.size();) {
    std::size_t end = rank;
    while (end < node_of_rank.size() && node_of_rank[end] == node_of_rank[rank])
      ++end;
    const auto length = static_cast<std::uint32_t>(end - rank);
    MappingBlock* last = runs.empty() ? nullptr : &runs.back();
    if (last != nullptr && last->per_node == length &&
        last->start + last->nodes == node_of_rank[rank]) {
      ++last->nodes;
    } else {
      runs.push_back({node_of_rank[rank], 1, length});
    }
    rank = end;
  }
  return runs;
}

// Calls `visit(node)` for each rank in turn, as MPICH expands `blocks`, until
// `size` ranks or `visit` returns false.
template <typename Visit>
void expand(const std::vector<MappingBlock>& blocks, std::uint32_t size, Visit visit) {
  // MPICH's rule: after a pass that met a block starting at node 0, later
  // passes skip the blocks before the first such block.
  bool wrapped = false;
  std::uint32_t done = 0;
  while (done < size) {
    const std::uint32_t before = done;
    std::size_t block = 0;
    while (wrapped && block < blocks.size() && blocks[block].start != 0)
      ++block;
    for (; block < blocks.size(); ++block) {
      if (blocks[block].start == 0) wrapped = true;
      for (std::uint32_t node = 0; node < blocks[block].nodes; ++node) {
        for (std::uint32_t k = 0; k < blocks[block].per_node; ++k) {
          if (done == size || !visit(blocks[block].start + node)) return;
          ++done;
        }
      }
    }
    if (done == before) return;  // blocks of no ranks: MPICH would loop for ever
  }
}

}  // namespace

std::vector<std::uint32_t> expand_mapping(const std::vector<MappingBlock>& blocks,
                                          std::uint32_t size) {
  std::vector<std::uint32_t> nodes;
  expand(blocks, size, [&](std::uint32_t node) {
    nodes.push_back(node);
    return true;
  });
  return nodes;
}

std::vector<MappingBlock> mapping_blocks(const std::vector<std::uint32_t>& node_of_rank) {
  std::vector<MappingBlock> runs = runs_of(node_of_rank);
  const auto size = static_cast<std::uint32_t>(node_of_rank.size());
  // The shortest prefix whose repetition is the whole (each candidate starts
  // again at a block like the first, which starts at node 0).
  for (std::size_t period = 1; period < runs.size(); ++period) {
    if (!(runs[period] == runs[0])) continue;
    std::vector<MappingBlock> prefix(runs.begin(),
                                     runs.begin() + static_cast<std::ptrdiff_t>(period));
    std::uint32_t same = 0;  // ranks the prefix puts where they are
    expand(prefix, size, [&](std::uint32_t node) {
      if (node_of_rank[same] != node) return false;
      ++same;
      return true;
    });
    if (same == size) return prefix;
  }
  return runs;
}

std::string format_mapping(const std::vector<MappingBlock>& blocks) {
  std::string text = "(vector";
  for (const MappingBlock& block : blocks) {
    text += ",(" + std::to_string(block.start) + "," + std::to_string(block.nodes) + "," +
            std::to_string(block.per_node) + ")";
  }
  return text + ")";
}

std::optional<std::vector<MappingBlock>> parse_mapping(std::string_view text) {
  constexpr std::string_view kHead = "(vector";
  if (text.substr(0, kHead.size()) != kHead || text.empty() || text.back() != ')')
    return std::nullopt;
  text.remove_prefix(kHead.size());
  text.remove_suffix(1);
  std::vector<MappingBlock> blocks;
  while (!text.empty()) {
    MappingBlock block;
    std::uint32_t* fields[] = {&block.start, &block.nodes, &block.per_node};
    if (text.substr(0, 2) != ",(") return std::nullopt;
    text.remove_prefix(2);
    for (std::size_t field = 0; field < 3; ++field) {
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *fields[field]);
      if (error != std::errc() || end == text.data()) return std::nullopt;
      text.remove_prefix(static_cast<std::size_t>(end - text.data()));
      const char separator = field < 2 ? ',' : ')';
      if (text.empty() || text.front() != separator) return std::nullopt;
      text.remove_prefix(1);
    }
    blocks.push_back(block);
  }
  return blocks;
}

std::vector<std::uint32_t> number_nodes(const std::vector<std::string>& host_of_rank) {
  std::map<std::string, std::uint32_t> ids;
  std::vector<std::uint32_t> nodes;
  nodes.reserve(host_of_rank.size());
  for (const std::string& host : host_of_rank) {
    auto [entry, added] = ids.emplace(host, static_cast<std::uint32_t>(ids.size()));
    nodes.push_back(entry->second);
  }
  return nodes;
}

}  // namespace grove::pmi
