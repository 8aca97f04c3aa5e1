// The PMIx side of simulated daemons: each daemon's ranks enter a fence
// round through that daemon's PmixFenceBook (daemon/control_plane/
// pmix_fences.h), the book the PMIx bridge drives in real daemons, and every
// answer the book gives is checked against what the daemons contributed:
// each call is answered exactly once; a released round hands a daemon every
// other participant's data in vpid order and none of its own; a round the
// engine ended early answers with its cause; nothing is left unanswered on a
// living daemon when the run ends.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/control_plane/pmix_fences.h"
#include "util/result.h"

namespace grove {

class SimPmixFences {
 public:
  // `nspace`: the simulated job's; its fence over every rank is the one run.
  SimPmixFences(std::uint32_t daemons, const std::string& nspace, std::uint64_t max_payload);

  // The engine's name for the job's fence.
  const std::string& signature() const { return signature_; }
  // Daemon `daemon`'s ranks enter round `round` with this daemon's data:
  // what to hand the engine (nothing when the book answers at once).
  std::optional<FenceRequest> enter(Vpid daemon, std::uint64_t round, FenceRequest request);
  // The engine ended a round on `daemon`: the book's answers, checked.
  Status fence_done(Vpid daemon, const FenceDone& done);
  // When the run ends: every call of a living daemon was answered.
  Status finish(const std::vector<bool>& alive) const;
  std::uint64_t released() const { return released_; }
  std::uint64_t failed() const { return failed_; }

 private:
  Status check(Vpid daemon, const pmix_fence::Answer& answer, const FenceDone& done);

  std::string nspace_;
  std::string signature_;
  std::vector<PmixFenceBook> books_;
  // Calls not answered yet: (daemon, the book's id) -> the round joined.
  std::map<std::pair<Vpid, std::uint64_t>, std::uint64_t> open_;
  // What each daemon contributed, by round.
  std::map<std::uint64_t, std::map<Vpid, Bytes>> contributed_;
  std::uint64_t released_ = 0;
  std::uint64_t failed_ = 0;
};

}  // namespace grove
