// A daemon's PMIx fences, as a state machine: which fences its ranks entered
// and the daemons have not released, which ranks left and the last round
// each took part in, and who is answered what, when. Sans-IO: inputs are a
// fence call (already resolved to jobs and hosts), the engine's FenceDone,
// departed ranks, a job's end and a timer; outputs are effects. The PMIx
// bridge drives it (it holds the libpmix answers and the timers by id); the
// simulator drives the same book over simulated daemons.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "grpcomm/effects.h"
#include "grpcomm/engine.h"
#include "rml/vpid_set.h"
#include "util/bytes.h"

namespace grove {

// The engine's name for a PMIx fence: the namespace and its participating
// ranks ("*" for all), identical on every daemon. Every signature of a
// namespace's fences starts with its scope.
std::string pmix_fence_scope(const std::string& nspace);
std::string pmix_fence_signature(const std::string& nspace,
                                 const std::vector<std::uint32_t>& ranks);

namespace pmix_fence {

// One job taking part in a fence (more than one after a connect).
struct Participants {
  std::uint32_t job = 0;
  std::string nspace;
  std::vector<std::uint32_t> ranks;  // sorted; empty: all of the job's
};

// How a fence ends for the ranks that called it.
enum class Outcome : std::uint8_t {
  released,     // every daemon's data, except this one's own
  timed_out,    // PMIX_TIMEOUT passed first
  rank_gone,    // it waits for a rank that left before taking part
  job_ended,    // a participating job ended
  unreachable,  // the engine gave up on it (a participant daemon was lost)
  too_large,    // its data does not fit in one frame
  undecodable,  // the release did not decode
};

struct Answer {
  std::uint64_t id = 0;
  Outcome outcome = Outcome::released;
  Bytes aggregate;  // with released
};
struct Contribute {
  FenceRequest request;
};
// Call timed_out(id) after `delay_ms`, unless the fence is answered first
// (the driver drops the timer with the answer).
struct ArmTimer {
  std::uint64_t id = 0;
  std::int64_t delay_ms = 0;
};
struct Notice {
  std::string text;  // an error line for the log
  // A problem the DVM keeps its flight recordings of (DaemonRuntime::report_problem).
  bool problem = false;
};

using Effect = std::variant<Answer, Contribute, ArmTimer, Notice>;
using Outbox = std::vector<Effect>;

}  // namespace pmix_fence

class PmixFenceBook {
 public:
  // `self`: this daemon (its own data is not handed back); `max_payload`:
  // what one frame carries, for the message of a fence too large.
  PmixFenceBook(Vpid self, std::uint64_t max_payload) : self_(self), max_payload_(max_payload) {}

  struct Call {
    std::vector<pmix_fence::Participants> jobs;  // in nspace order
    VpidSet hosts;                               // the daemons hosting the participants
    std::uint32_t timeout_seconds = 0;           // 0: none
    Bytes data;                                  // this daemon's contribution
    // The membership epoch the jobs were placed in (FenceRequest); UINT64_MAX: not stated.
    std::uint64_t placed_epoch = UINT64_MAX;
  };
  // The engine's name for a fence over `jobs`.
  static std::string signature_of(const std::vector<pmix_fence::Participants>& jobs);
  // A fence this daemon's ranks entered, joining round `round` of its
  // signature (the engine's generation + 1). `id` names it in the effects:
  // the caller holds its answer under that id before draining `outbox`.
  struct Begun {
    std::uint64_t id = 0;
    pmix_fence::Outbox outbox;
  };
  Begun begin(Call call, std::uint64_t round);
  pmix_fence::Outbox fence_done(const FenceDone& done);
  pmix_fence::Outbox timed_out(std::uint64_t id);
  // Ranks of `job` left: for each, the last round of every signature that
  // was released on its daemon when it left.
  struct GoneRank {
    std::uint32_t rank = 0;
    std::map<std::string, std::uint64_t> released;
  };
  pmix_fence::Outbox ranks_gone(std::uint32_t job, const std::vector<GoneRank>& ranks);
  // The job ended: every fence it takes part in is answered; what is known
  // of its departed ranks goes.
  pmix_fence::Outbox job_ended(std::uint32_t job, const std::string& nspace);

  // Whether round `round` of `signature` over `ranks` of `job` (empty: all)
  // waits for a rank that left before taking part in it.
  bool waits_for_gone(std::uint32_t job, const std::vector<std::uint32_t>& ranks,
                      const std::string& signature, std::uint64_t round) const;
  std::size_t pending() const { return fences_.size(); }

 private:
  struct Fence {
    std::string signature;
    std::uint64_t round = 0;
    std::vector<pmix_fence::Participants> jobs;
  };
  void answer(std::uint64_t id, pmix_fence::Outcome outcome, pmix_fence::Outbox& outbox,
              Bytes aggregate = {});
  Bytes others_data(const FenceDone& done, bool& decoded) const;

  Vpid self_;
  std::uint64_t max_payload_;
  std::map<std::uint64_t, Fence> fences_;  // unanswered, by id
  std::uint64_t next_id_ = 1;
  // Departed ranks by job, then rank: the last round of each signature
  // released on the rank's daemon when it left.
  std::map<std::uint32_t, std::map<std::uint32_t, std::map<std::string, std::uint64_t>>> gone_;
};

}  // namespace grove
