// A daemon's PMIx collectives over sets of processes that may span jobs
// (PMIx_Connect, PMIx_Disconnect, PMIx_Group_construct and _destruct), as a
// state machine beside the fence book: which round each joined, which waits
// for a rank that left, the context id the daemons agree on, and what each
// is answered. Sans-IO; the PMIx bridge drives it, registering the
// participating jobs with libpmix where the book says so before answering.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/control_plane/pmix_fences.h"

namespace grove {

namespace pmix_collective {

enum class Outcome : std::uint8_t {
  done,         // completed (a disconnect, a destruct; or after registering)
  rank_gone,    // it waits for a rank that left before taking part
  job_ended,    // a participating job ended
  unreachable,  // the engine gave up on it
  no_context,   // a context id was asked for and no daemon offered one
};

// Context ids are never 0 (a daemon's vpid above a count from 1): 0 is none.
struct Answer {
  std::uint64_t id = 0;
  Outcome outcome = Outcome::done;
  std::uint64_t context_id = 0;
};
struct Contribute {
  FenceRequest request;
};
// Completed: register every participating job with libpmix, then answer
// (done, with `context_id`) or, if a registration failed, with an error.
struct RegisterThenAnswer {
  std::uint64_t id = 0;
  std::uint64_t context_id = 0;
  std::vector<std::string> nspaces;
  std::string signature;  // for the log
};
struct Notice {
  std::string text;
};

using Effect = std::variant<Answer, Contribute, RegisterThenAnswer, Notice>;
using Outbox = std::vector<Effect>;

}  // namespace pmix_collective

class PmixCollectiveBook {
 public:
  explicit PmixCollectiveBook(Vpid self) : self_(self) {}

  struct Call {
    std::string kind;  // "connect", "disconnect", "group-construct:ID", ...
    std::vector<pmix_fence::Participants> jobs;  // in nspace order
    VpidSet hosts;
    bool registers = true;  // false: a disconnect or a destruct
    bool wants_context_id = false;
    std::uint32_t timeout_seconds = 0;
  };
  // The engine's name for a collective: in the scope of its first job (its
  // state goes when that job ends), every participant listed.
  static std::string signature_of(const std::string& kind,
                                  const std::vector<pmix_fence::Participants>& jobs);
  struct Begun {
    std::uint64_t id = 0;
    pmix_collective::Outbox outbox;
  };
  // `round`: the engine's round of the signature it joins; `gone`: the
  // fence book, which knows the ranks that left.
  Begun begin(Call call, std::uint64_t round, const PmixFenceBook& gone);
  pmix_collective::Outbox collective_done(const FenceDone& done);
  // After the fence book heard of departed ranks: what now cannot complete.
  pmix_collective::Outbox ranks_gone(const PmixFenceBook& gone);
  pmix_collective::Outbox job_ended(const std::string& nspace);
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    std::uint64_t id = 0;
    std::uint64_t round = 0;
    bool registers = true;
    bool wants_context_id = false;
    std::vector<pmix_fence::Participants> jobs;
  };
  static bool waits_for_gone(const Pending& pending, const std::string& signature,
                             const PmixFenceBook& gone);
  static std::vector<std::string> nspaces_of(const Pending& pending);

  Vpid self_;
  std::uint64_t next_id_ = 1;
  std::uint64_t offers_ = 0;                     // context ids this daemon has offered
  std::multimap<std::string, Pending> pending_;  // by signature
};

}  // namespace grove
