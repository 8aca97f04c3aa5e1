// A JoinSeed on the wire: what the controller sends a daemon that comes back
// or joins (Engine::join_seed), so it starts its engine where the DVM is.
// Decoding validates the membership as create() and adopt() would take it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "grpcomm/engine.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"
#include "util/result.h"
#include "util/wire.h"

namespace grove {

struct JoinSeedMessage {
  VpidSet daemons;  // the daemon set (joins included)
  std::uint64_t epoch = 0;
  std::vector<Vpid> failed;
  Vpid vpid_end = 0;
  std::vector<std::pair<Vpid, std::uint64_t>> incarnations;  // by vpid, strictly ascending
  std::uint64_t tree_version = 0;
  std::uint64_t routing_watermark = 1;
  std::uint64_t release_watermark = 1;
  std::vector<std::pair<std::string, std::uint64_t>> released;  // fence rounds
  std::vector<std::string> retired;                             // ended scopes, oldest first

  static constexpr const char* wire_name = "join seed";
  static auto wire_fields(auto& m) {
    return std::tie(m.daemons, m.epoch, m.failed, m.vpid_end, m.incarnations, m.tree_version,
                    m.routing_watermark, m.release_watermark, m.released, m.retired);
  }
  bool wire_valid() const;
};

Bytes encode_join_seed(const JoinSeed& seed);
// The seed, or why the bytes are not one (malformed, or a membership no
// engine could start from: no controller, an epoch of 0).
Result<JoinSeed> decode_join_seed(std::span<const std::byte> payload);

}  // namespace grove
