// The state of one fence round's Bruck exchange on one daemon (the protocol
// is in bruck_fence.cc, its argument in docs/engine.md, "The Bruck
// exchange"). Pure data.
//
// A run is the exchange in one epoch among that epoch's members: the living
// daemons hosting participants, less any that came back after the
// participants were placed, by vpid. A new epoch starts a new run; frames of
// an older run are dropped whole, frames of a newer one wait here until this
// daemon adopts that epoch.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "grpcomm/effects.h"
#include "grpcomm/messages.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"

namespace grove {

// grpcomm_fence_topology: how a fence's contributions travel.
enum class FenceTopology : std::uint8_t {
  tree,   // up the routing tree, released down the release tree
  bruck,  // a Bruck allgather among the participants' daemons, no release
};

// A contribution held here: a view into a buffer that holds it (this
// daemon's own contribution, or the payload of the frame it came in), so a
// block is copied only as it is encoded into a frame or the release. A
// frame stays whole while any block taken from it is held: in a first run
// every block of a frame is new to its receiver, so that costs nothing; a
// later run's frame that brings one new block among held ones pins it all,
// at most one frame per round heard until the round's state goes.
struct HeldBlock {
  SharedBytes owner;  // keeps `bytes` alive
  ByteView bytes;
};

struct BruckOp {
  // Known once this daemon contributed (a round's participants are the same
  // on every daemon, so they do not travel).
  VpidSet participants;
  std::uint64_t placed_epoch = UINT64_MAX;
  bool local = false;      // this daemon contributed
  bool delivered = false;  // it ended here; kept to rejoin a later run
  bool too_large = false;  // some round's data would not fit in a frame
  std::map<Vpid, HeldBlock> contributions;

  // The run in progress, if one started.
  struct Run {
    bool started = false;
    std::uint64_t epoch = 0;
    std::vector<Vpid> members;  // ascending
    std::uint32_t self_index = 0;
    bool member = false;  // this daemon is one (it is, unless it came back)
    std::uint32_t rounds = 0;
    std::uint32_t sent = 0;   // rounds sent, in order
    std::uint64_t heard = 0;  // bit k: round k's frame arrived
    bool decided = false;     // this run ended the round (or ended it again)
    // Contributions held of daemons that are not members: they travel in
    // every frame of the run, so every member ends with them.
    std::uint32_t outsiders = 0;
    bool finished() const { return heard == full(rounds); }
    static std::uint64_t full(std::uint32_t count) {
      return count >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
    }
  };
  Run run;

  // Frames this daemon cannot take yet: of an epoch it has not adopted, or
  // before it knows the round's participants.
  struct Early {
    Vpid from = 0;
    std::uint64_t epoch = 0;
    SharedBytes payload;  // the frame's, which `round` points into
    BruckRoundView round;
  };
  std::vector<Early> early;

  // How it ended here, the first time: every later run must end the same way.
  FenceStatus status = FenceStatus::ok;
  Vpid lost = 0;
};

}  // namespace grove
