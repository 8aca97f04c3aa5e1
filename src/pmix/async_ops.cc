#include "pmix/async_ops.h"

#include <algorithm>
#include <vector>

namespace grove::pmix_internal {

namespace {
constexpr std::int64_t kDeadlineCheckMs = 1000;
}

std::string describe(const char* call, pmix_status_t status) {
  return std::string(call) + ": " + PMIx_Error_string(status);
}

AsyncOps::AsyncOps(event_base* loop, PostResult post_result, TimeNs deadline_ns,
                   AnsweredAgain answered_again)
    : post_result_(std::move(post_result)),
      answered_again_(std::move(answered_again)),
      deadline_ns_(deadline_ns),
      timer_(loop, [this] { expire(monotonic_now_ns()); }) {}

void AsyncOps::start(std::string what, const Start& start, Done done,
                     std::shared_ptr<const void> lent) {
  const std::uint64_t id = next_id_++;
  ops_.emplace(
      id, Op{std::move(what), std::move(done), monotonic_now_ns() + deadline_ns_, std::move(lent)});
  if (ops_.size() == 1) timer_.arm_every(kDeadlineCheckMs);
  const pmix_status_t started =
      start(on_op_done, reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)));
  // PMIx will not call back: the answer goes through the mailbox all the
  // same, so `done` never runs inside this call.
  if (started != PMIX_SUCCESS) {
    post_result_(id, started == PMIX_OPERATION_SUCCEEDED ? PMIX_SUCCESS : started);
  }
}

void AsyncOps::refuse(Error why, Done done) {
  start(
      "", [](pmix_op_cbfunc_t, void*) { return PMIX_ERR_BAD_PARAM; },
      [why = std::move(why), done = std::move(done)](Status) { done(why); });
}

void AsyncOps::finished(std::uint64_t id, pmix_status_t status) {
  expired_lent_.erase(id);  // PMIx is done with it now
  const std::optional<std::string> stuck = unanswered_past_deadline();
  expired_unanswered_.erase(id);
  last_answered_ = std::max(last_answered_, id);
  if (stuck && !unanswered_past_deadline() && answered_again_) answered_again_(*stuck);
  auto found = ops_.find(id);
  if (found == ops_.end()) return;  // answered after its deadline
  Op op = std::move(found->second);
  ops_.erase(found);
  if (ops_.empty()) timer_.cancel();
  op.done(status == PMIX_SUCCESS ? ok_status() : Status(Error{describe(op.what.c_str(), status)}));
}

void AsyncOps::expire(TimeNs now) {
  std::vector<Op> late;
  for (auto it = ops_.begin(); it != ops_.end();) {
    if (it->second.deadline_ns > now) {
      ++it;
      continue;
    }
    // libpmix may still read what it was lent when it gets to the call.
    if (it->second.lent) expired_lent_.emplace(it->first, std::move(it->second.lent));
    if (!it->second.what.empty()) expired_unanswered_.emplace(it->first, it->second.what);
    late.push_back(std::move(it->second));
    it = ops_.erase(it);
  }
  if (ops_.empty()) timer_.cancel();
  for (Op& op : late) {
    const bool whole = deadline_ns_ % 1'000'000'000ULL == 0;
    op.done(Error{op.what + ": no answer from PMIx within " +
                  (whole ? std::to_string(deadline_ns_ / 1'000'000'000ULL) + " s"
                         : std::to_string(deadline_ns_ / 1'000'000ULL) + " ms")});
  }
}

}  // namespace grove::pmix_internal
