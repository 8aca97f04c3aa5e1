// PmixAnswer: libpmix's "call cbfunc exactly once", kept by the type.
#include <catch2/catch.hpp>

#include <optional>

#include "pmix/answer_registry.h"

using namespace grove;
using pmix_internal::AnswerKind;
using pmix_internal::AnswerRegistry;

namespace {

struct Calls {
  int count = 0;
  int status = 0;
  std::vector<int> values;
};

PmixAnswer<std::vector<int>> counted(AnswerRegistry& registry, Calls& calls,
                                     std::vector<std::string> nspaces = {}, int on_job_end = -1) {
  return registry.make<std::vector<int>>(
      AnswerKind::fence,
      [&calls](int status, std::vector<int> values) {
        ++calls.count;
        calls.status = status;
        calls.values = std::move(values);
      },
      std::move(nspaces), on_job_end);
}

}  // namespace

TEST_CASE("an answer runs its callback once", "[pmix_answer]") {
  AnswerRegistry registry;
  Calls calls;
  auto answer = counted(registry, calls);
  CHECK(answer.pending());
  CHECK(registry.pending(AnswerKind::fence) == 1);
  answer(0, {1, 2, 3});
  answer(-1, {9});  // a second answer finds it empty
  CHECK(calls.count == 1);
  CHECK(calls.status == 0);
  CHECK(calls.values == std::vector<int>{1, 2, 3});
  CHECK_FALSE(answer.pending());
  CHECK(registry.pending(AnswerKind::fence) == 0);
}

TEST_CASE("an answer dropped unanswered answers NOT_SUPPORTED, or what it was told",
          "[pmix_answer]") {
  AnswerRegistry registry;
  Calls dropped;
  { auto answer = counted(registry, dropped); }
  CHECK(dropped.count == 1);
  CHECK(dropped.status == kPmixAnswerNotSupported);
  CHECK(dropped.values.empty());

  Calls told;
  {
    auto answer = counted(registry, told);
    answer.answer_on_drop(-25);
  }
  CHECK(told.count == 1);
  CHECK(told.status == -25);

  // Moving hands the duty on; assigning over a pending answer drops that one.
  Calls first, second;
  auto a = counted(registry, first);
  auto b = counted(registry, second);
  auto moved = std::move(a);
  CHECK(first.count == 0);
  moved = std::move(b);
  CHECK(first.count == 1);
  CHECK(first.status == kPmixAnswerNotSupported);
  CHECK(second.count == 0);
  moved(0, {});
  CHECK(second.count == 1);
}

TEST_CASE("a job's end answers what names it, and its holder's answer then does nothing",
          "[pmix_answer]") {
  AnswerRegistry registry;
  Calls mine, theirs;
  auto answer = counted(registry, mine, {"job.1", "job.2"}, -111);
  auto other = counted(registry, theirs, {"job.3"}, -111);
  registry.job_ended("job.2");
  CHECK(mine.count == 1);
  CHECK(mine.status == -111);
  CHECK_FALSE(answer.pending());
  CHECK(theirs.count == 0);
  answer(0, {7});
  CHECK(mine.count == 1);  // still once
  CHECK(registry.pending(AnswerKind::fence) == 1);
  other(0, {});
}

TEST_CASE("answers outliving their server do nothing", "[pmix_answer]") {
  Calls calls;
  PmixAnswer<std::vector<int>> kept;
  {
    AnswerRegistry registry;
    kept = counted(registry, calls);
  }
  kept(0, {1});
  CHECK(calls.count == 0);
  // Dropped after the server, too.
  {
    PmixAnswer<std::vector<int>> dropped;
    {
      AnswerRegistry registry;
      dropped = counted(registry, calls);
    }
  }
  CHECK(calls.count == 0);
}

TEST_CASE("many answers are counted right across pruning", "[pmix_answer]") {
  AnswerRegistry registry;
  std::vector<Calls> calls(500);
  std::vector<PmixAnswer<std::vector<int>>> answers;
  for (Calls& each : calls)
    answers.push_back(counted(registry, each));
  for (std::size_t i = 0; i < answers.size(); i += 2)
    answers[i](0, {});
  CHECK(registry.pending(AnswerKind::fence) == 250);
  CHECK(registry.pending(AnswerKind::query) == 0);
  answers.clear();  // the rest are dropped: each answers once
  for (const Calls& each : calls)
    CHECK(each.count == 1);
  CHECK(registry.pending(AnswerKind::fence) == 0);
}
