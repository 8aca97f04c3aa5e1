// PMI_process_mapping: which node each rank of a job runs on, in the form
// MPICH reads ("(vector,(start,nodes,ranks_per_node),...)"; MPICH repeats
// the blocks from the first until every rank has a node). MPICH decides from
// it which ranks share memory, so it must be exact: the string made here
// expands, MPICH's way, to the very node of every rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace grove::pmi {

struct MappingBlock {
  std::uint32_t start = 0;     // the first node's id
  std::uint32_t nodes = 0;     // consecutive nodes, from start
  std::uint32_t per_node = 0;  // ranks on each
  bool operator==(const MappingBlock&) const = default;
};

// `node_of_rank[r]`: the node of rank r, nodes numbered from 0 in the order
// their first rank appears (rank 0 is on node 0). The shortest list of
// blocks that expands to it.
std::vector<MappingBlock> mapping_blocks(const std::vector<std::uint32_t>& node_of_rank);
std::string format_mapping(const std::vector<MappingBlock>& blocks);
// The blocks of a "(vector,(s,n,k),...)" text; nothing if it is not one.
std::optional<std::vector<MappingBlock>> parse_mapping(std::string_view text);
// What MPICH makes of `blocks` for `size` ranks (for the tests' and the
// docs' checks).
std::vector<std::uint32_t> expand_mapping(const std::vector<MappingBlock>& blocks,
                                          std::uint32_t size);
// Node ids by first appearance from any labels of nodes (host names).
std::vector<std::uint32_t> number_nodes(const std::vector<std::string>& host_of_rank);

}  // namespace grove::pmi
