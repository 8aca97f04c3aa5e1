// Internal to grove_pmix. libpmix calls that finish through a
// pmix_op_cbfunc_t on PMIx's progress thread (registrations,
// deregistrations), answered on the daemon's loop: the loop never waits for
// libpmix. A stranger's connection, a rank killed inside its handshake or
// libpmix's own bugs can hold that thread; while they do, the daemon keeps
// its heartbeats, its fences and its other jobs going, and a call PMIx has
// not answered by the deadline fails with an error naming it.
#pragma once

#include <pmix.h>
#include <pmix_server.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "os/event_ptr.h"
#include "os/timer.h"
#include "util/clock.h"
#include "util/result.h"

namespace grove::pmix_internal {

// "CALL: PMIx's name for status".
std::string describe(const char* call, pmix_status_t status);

class AsyncOps {
 public:
  using Start = std::function<pmix_status_t(pmix_op_cbfunc_t, void*)>;
  using Done = std::function<void(Status)>;
  // `post_result(id, status)` must hand the result to finished() on the
  // loop later (the mailbox); `deadline_ns` bounds every call.
  using PostResult = std::function<void(std::uint64_t id, pmix_status_t status)>;
  // `answered_again(what)`: PMIx answered again after a stuck spell
  // (unanswered_past_deadline() went empty); `what` names the stuck call.
  using AnsweredAgain = std::function<void(const std::string& what)>;
  AsyncOps(event_base* loop, PostResult post_result, TimeNs deadline_ns,
           AnsweredAgain answered_again = {});
  AsyncOps(const AsyncOps&) = delete;
  AsyncOps& operator=(const AsyncOps&) = delete;

  // Starts the call; `done` runs later on the loop, never inside this call:
  // with PMIx's answer, or with an error naming `what` once the deadline has
  // passed (a late answer is then dropped). `lent` is memory the call hands
  // libpmix without a copy (an info array it reads later, on its thread):
  // it is kept until PMIx answers, past the deadline if it must.
  void start(std::string what, const Start& start, Done done,
             std::shared_ptr<const void> lent = nullptr);
  // A call refused before it reached PMIx: `done` gets `why`, later on the
  // loop all the same.
  void refuse(Error why, Done done);
  // PMIx's answer to call `id` (from the mailbox).
  void finished(std::uint64_t id, pmix_status_t status);
  std::size_t pending() const { return ops_.size(); }
  // Calls past their deadline whose lent memory waits for PMIx's answer.
  std::size_t lent_after_deadline() const { return expired_lent_.size(); }
  // The oldest call PMIx has not answered though its deadline passed (its
  // `what`), or nothing: libpmix's progress thread may be stuck for good.
  // One lost answer is not a stuck thread: only a call past its deadline
  // that no later call's answer has overtaken counts.
  std::optional<std::string> unanswered_past_deadline() const {
    if (expired_unanswered_.empty() || expired_unanswered_.rbegin()->first < last_answered_)
      return std::nullopt;
    return expired_unanswered_.rbegin()->second;
  }

 private:
  void expire(TimeNs now);

  struct Op {
    std::string what;
    Done done;
    TimeNs deadline_ns = 0;
    std::shared_ptr<const void> lent;
  };
  PostResult post_result_;
  AnsweredAgain answered_again_;
  TimeNs deadline_ns_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, Op> ops_;
  std::map<std::uint64_t, std::shared_ptr<const void>> expired_lent_;
  std::map<std::uint64_t, std::string> expired_unanswered_;  // by id: what
  std::uint64_t last_answered_ = 0;                          // the newest call PMIx answered
  Timer timer_;                                              // armed while ops are
};

// The pmix_op_cbfunc_t of every AsyncOps call: cbdata is the call's id (not
// a pointer), so an answer that never comes leaks nothing (upcalls.cc).
void on_op_done(pmix_status_t status, void* cbdata);

}  // namespace grove::pmix_internal
