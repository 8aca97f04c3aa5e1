// AsyncOps: libpmix calls answered on the loop, bounded by a deadline, and
// what a call lends libpmix kept until libpmix has answered, however late.
#include <catch2/catch.hpp>

#include <event2/event.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pmix/async_ops.h"

using grove::Status;
using grove::pmix_internal::AsyncOps;

TEST_CASE("memory lent to a libpmix call outlives the call's deadline until PMIx answers",
          "[pmix][async]") {
  // A registration hands libpmix an info array it reads later on its own
  // thread; a call past its deadline (a stalled progress thread) must not
  // free it, or libpmix reads freed memory when it gets to the call.
  std::unique_ptr<event_base, decltype(&event_base_free)> loop(event_base_new(), event_base_free);
  REQUIRE(loop);
  std::vector<std::string> answered_again;
  AsyncOps ops(
      loop.get(), [](std::uint64_t, pmix_status_t) {}, /*deadline_ns=*/0,
      [&](const std::string& what) { answered_again.push_back(what); });
  auto lent = std::make_shared<int>(42);
  std::weak_ptr<int> watch = lent;
  std::optional<std::uint64_t> call_id;
  std::optional<Status> outcome;
  int answers = 0;
  ops.start(
      "PMIx_pretend",
      [&](pmix_op_cbfunc_t, void* cbdata) {
        call_id = reinterpret_cast<std::uintptr_t>(cbdata);
        return PMIX_SUCCESS;  // PMIx will answer later (here: after the deadline)
      },
      [&](Status done) {
        outcome = std::move(done);
        ++answers;
      },
      std::move(lent));
  REQUIRE(call_id);
  CHECK(ops.pending() == 1);
  // The deadline check runs once a second on the loop.
  while (!outcome)
    event_base_loop(loop.get(), EVLOOP_ONCE);
  REQUIRE_FALSE(*outcome);
  CHECK_THAT(outcome->error().message, Catch::Contains("PMIx_pretend: no answer from PMIx"));
  CHECK(ops.pending() == 0);
  CHECK(ops.lent_after_deadline() == 1);
  // Unanswered past its deadline: the daemon refuses new ranks, naming it.
  CHECK(ops.unanswered_past_deadline() == std::optional<std::string>("PMIx_pretend"));
  CHECK_FALSE(watch.expired());          // libpmix may still read it
  ops.finished(*call_id, PMIX_SUCCESS);  // the late answer
  CHECK(watch.expired());
  CHECK(ops.lent_after_deadline() == 0);
  CHECK_FALSE(ops.unanswered_past_deadline());  // libpmix answers again
  CHECK(answered_again == std::vector<std::string>{"PMIx_pretend"});
  CHECK(answers == 1);  // the caller heard once, at the deadline
}

TEST_CASE("memory lent to a libpmix call is freed with a timely answer", "[pmix][async]") {
  std::unique_ptr<event_base, decltype(&event_base_free)> loop(event_base_new(), event_base_free);
  REQUIRE(loop);
  AsyncOps ops(
      loop.get(), [](std::uint64_t, pmix_status_t) {}, 60'000'000'000ULL);
  auto lent = std::make_shared<int>(7);
  std::weak_ptr<int> watch = lent;
  std::optional<std::uint64_t> call_id;
  std::optional<Status> outcome;
  ops.start(
      "PMIx_pretend",
      [&](pmix_op_cbfunc_t, void* cbdata) {
        call_id = reinterpret_cast<std::uintptr_t>(cbdata);
        return PMIX_SUCCESS;
      },
      [&](Status done) { outcome = std::move(done); }, std::move(lent));
  REQUIRE(call_id);
  CHECK_FALSE(watch.expired());
  ops.finished(*call_id, PMIX_SUCCESS);
  REQUIRE(outcome);
  CHECK(*outcome);
  CHECK(watch.expired());
  CHECK(ops.lent_after_deadline() == 0);
}

TEST_CASE("one lost answer is not a stuck libpmix: a later call's answer overtakes it",
          "[pmix][async]") {
  std::unique_ptr<event_base, decltype(&event_base_free)> loop(event_base_new(), event_base_free);
  REQUIRE(loop);
  int answered_again = 0;
  AsyncOps ops(
      loop.get(), [](std::uint64_t, pmix_status_t) {}, /*deadline_ns=*/0,
      [&](const std::string&) { ++answered_again; });
  std::vector<std::uint64_t> ids;
  int done = 0;
  auto call = [&](const char* what) {
    ops.start(
        what,
        [&](pmix_op_cbfunc_t, void* cbdata) {
          ids.push_back(reinterpret_cast<std::uintptr_t>(cbdata));
          return PMIX_SUCCESS;
        },
        [&](Status) { ++done; });
  };
  call("PMIx_lost");
  while (done < 1)
    event_base_loop(loop.get(), EVLOOP_ONCE);
  CHECK(ops.unanswered_past_deadline() == std::optional<std::string>("PMIx_lost"));
  call("PMIx_later");
  while (done < 2)
    event_base_loop(loop.get(), EVLOOP_ONCE);
  CHECK(ops.unanswered_past_deadline() == std::optional<std::string>("PMIx_later"));
  ops.finished(ids[1], PMIX_SUCCESS);  // libpmix answers the later call: it is not stuck
  CHECK_FALSE(ops.unanswered_past_deadline());
  CHECK(answered_again == 1);
  ops.finished(ids[0], PMIX_SUCCESS);  // the lost one, at last: nothing changes
  CHECK(answered_again == 1);
}
