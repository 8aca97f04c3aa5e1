// Automatic flight dumps (docs/simulator.md, "Automatic dumps"): when a
// daemon sees a problem (a fence past its PMIX_TIMEOUT, a broadcast the
// controller has waited on too long), the controller gathers every daemon's
// flight recording into a directory of its own, as `grove status --dump`
// does. This decides when: one dump at a time; a problem seen while one is
// gathered, or soon after it started, joins it (a job whose every rank
// times out makes one dump, not one per rank; not one that failed); at
// most `max` per DVM, so a
// DVM that keeps failing cannot fill the disk. Sans-IO: `now` is handed in.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "rml/frame.h"
#include "util/clock.h"

namespace grove {

class AutoFlightDumps {
 public:
  // Problems this soon after a dump started join it: the daemons' recordings
  // were taken a moment ago, and already hold what led to them.
  static constexpr TimeNs kJoinWindowNs = TimeNs{10'000'000'000};

  // `base_dir`: where each dump gets its directory (dump-1, dump-2, ...);
  // `max`: how many a DVM makes (0: none).
  AutoFlightDumps(std::string base_dir, std::uint32_t max)
      : base_dir_(std::move(base_dir)), max_(max) {}

  struct Dump {
    std::string dir;
    std::vector<std::string> problems;  // "daemon 3: fence ... timed out (PMIX_TIMEOUT)"
    TimeNs started_ns = 0;
    bool finished = false;
    std::size_t files = 0;  // recordings written
    std::uint64_t bytes = 0;
    std::string error;  // why nothing was written
  };

  // A problem seen at daemon `where`: a new dump to gather now into `dir`,
  // or the problem joined the newest dump (`dir`), or the DVM made its last
  // one (dropped() counts those).
  struct Decision {
    enum class What : std::uint8_t { gather, joined, dropped };
    What what = What::dropped;
    std::string dir;
  };
  Decision problem_seen(Vpid where, const std::string& text, TimeNs now);
  // The newest dump's gathering ended: `files` recordings (`bytes` in all)
  // written, or none and why.
  void finished(std::size_t files, std::uint64_t bytes, std::string error);

  const std::vector<Dump>& dumps() const { return dumps_; }
  std::uint64_t dropped() const { return dropped_; }
  bool on() const { return max_ > 0; }

 private:
  std::string base_dir_;
  std::uint32_t max_;
  std::vector<Dump> dumps_;
  std::uint64_t dropped_ = 0;
};

}  // namespace grove
