// A daemon's PMIx fence book against scripted inputs: what it contributes,
// when it arms a timer, and which answer each cause gives, exactly once.
#include <catch2/catch.hpp>

#include "daemon/control_plane/pmix_fences.h"
#include "grpcomm/messages.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::count_of;
using grove::test::effects_of;
using pmix_fence::Outcome;

namespace {

constexpr Vpid kSelf = 1;

Bytes bytes_of(std::string_view text) {
  Bytes out;
  for (char c : text)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

PmixFenceBook::Call job_fence(std::uint32_t job, std::vector<std::uint32_t> ranks,
                              std::uint32_t timeout_seconds = 0) {
  PmixFenceBook::Call call;
  call.jobs.push_back({job, "grove." + std::to_string(job), std::move(ranks)});
  call.hosts = VpidSet::span(0, 2);
  call.timeout_seconds = timeout_seconds;
  call.data = bytes_of("mine");
  return call;
}

FenceDone released(const std::string& signature, std::uint64_t round) {
  FenceRelease release;
  release.key = {signature, round};
  release.contributions = {{0, bytes_of("zero")}, {kSelf, bytes_of("mine")}, {2, bytes_of("two")}};
  FenceDone done;
  done.key = release.key;
  done.release = std::make_shared<const Bytes>(encode(release));
  return done;
}

}  // namespace

TEST_CASE("a fence's signature names its jobs and ranks alike on every daemon", "[pmix_fences]") {
  CHECK(pmix_fence_signature("grove.3", {}) == "pmix:grove.3:*");
  CHECK(pmix_fence_signature("grove.3", {0, 1, 2, 5, 7, 8}) == "pmix:grove.3:0-2,5,7-8");
  std::vector<pmix_fence::Participants> jobs{{3, "grove.3", {}}, {4, "grove.4", {1}}};
  CHECK(PmixFenceBook::signature_of(jobs) == "pmix:grove.3:*|pmix:grove.4:1");
}

TEST_CASE("a released fence answers with every other daemon's data", "[pmix_fences]") {
  PmixFenceBook book(kSelf, 1 << 20);
  auto begun = book.begin(job_fence(3, {}), 1);
  REQUIRE(begun.outbox.size() == 1);
  const auto& contribute = std::get<pmix_fence::Contribute>(begun.outbox[0]);
  CHECK(contribute.request.signature == "pmix:grove.3:*");
  CHECK(contribute.request.participants == VpidSet::from_list(std::vector<Vpid>{0, 1, 2}));
  CHECK(contribute.request.data == bytes_of("mine"));
  CHECK(book.pending() == 1);

  auto out = book.fence_done(released("pmix:grove.3:*", 1));
  auto answers = effects_of<pmix_fence::Answer>(out);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == begun.id);
  CHECK(answers[0].outcome == Outcome::released);
  CHECK(answers[0].aggregate == bytes_of("zerotwo"));  // not this daemon's own
  CHECK(book.pending() == 0);
  // The round's end again (a duplicate) answers nothing.
  CHECK(book.fence_done(released("pmix:grove.3:*", 1)).empty());
}

TEST_CASE("a fence releases only the rounds it joined", "[pmix_fences]") {
  PmixFenceBook book(kSelf, 1 << 20);
  auto second = book.begin(job_fence(3, {}), 2);
  CHECK(effects_of<pmix_fence::Answer>(book.fence_done(released("pmix:grove.3:*", 1))).empty());
  CHECK(effects_of<pmix_fence::Answer>(book.fence_done(released("pmix:grove.4:*", 2))).empty());
  auto answers = effects_of<pmix_fence::Answer>(book.fence_done(released("pmix:grove.3:*", 2)));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == second.id);
}

TEST_CASE("PMIX_TIMEOUT arms a timer and answers once", "[pmix_fences]") {
  PmixFenceBook book(kSelf, 1 << 20);
  auto begun = book.begin(job_fence(3, {}, 5), 1);
  REQUIRE(count_of<pmix_fence::ArmTimer>(begun.outbox) == 1);
  const auto& timer = std::get<pmix_fence::ArmTimer>(begun.outbox[0]);
  CHECK(timer.id == begun.id);
  CHECK(timer.delay_ms == 5000);
  auto out = book.timed_out(begun.id);
  auto notices = effects_of<pmix_fence::Notice>(out);
  REQUIRE(notices.size() == 1);
  // A timeout is a problem the DVM dumps its flight recordings for.
  CHECK(notices[0].problem);
  auto answers = effects_of<pmix_fence::Answer>(out);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].outcome == Outcome::timed_out);
  // The release that comes after finds nothing to answer; nor does the timer again.
  CHECK(book.fence_done(released("pmix:grove.3:*", 1)).empty());
  CHECK(book.timed_out(begun.id).empty());
}

TEST_CASE("a rank that left before its round fails the fence; one that took part does not",
          "[pmix_fences]") {
  PmixFenceBook book(kSelf, 1 << 20);
  const std::string all = "pmix:grove.3:*";
  auto first = book.begin(job_fence(3, {}), 1);
  auto second = book.begin(job_fence(3, {}), 2);
  // Rank 2 left after round 1 was released on its daemon: round 1 still
  // completes, round 2 cannot.
  auto out = book.ranks_gone(3, {{2, {{all, 1}}}});
  auto answers = effects_of<pmix_fence::Answer>(out);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == second.id);
  CHECK(answers[0].outcome == Outcome::rank_gone);
  CHECK(book.waits_for_gone(3, {}, all, 2));
  CHECK_FALSE(book.waits_for_gone(3, {}, all, 1));
  CHECK_FALSE(book.waits_for_gone(3, {0, 1}, all, 2));  // a fence without rank 2
  // A new fence of that round is refused at once, without contributing.
  auto third = book.begin(job_fence(3, {}), 2);
  CHECK(count_of<pmix_fence::Contribute>(third.outbox) == 0);
  REQUIRE(effects_of<pmix_fence::Answer>(third.outbox).size() == 1);
  CHECK(effects_of<pmix_fence::Answer>(third.outbox)[0].outcome == Outcome::rank_gone);
  CHECK(effects_of<pmix_fence::Answer>(book.fence_done(released(all, 1)))[0].id == first.id);
}

TEST_CASE("a job's end answers every fence it takes part in", "[pmix_fences]") {
  PmixFenceBook book(kSelf, 1 << 20);
  auto own = book.begin(job_fence(3, {}), 1);
  PmixFenceBook::Call across = job_fence(4, {});
  across.jobs.insert(across.jobs.begin(), {3, "grove.3", {0}});
  auto shared = book.begin(std::move(across), 1);
  auto other = book.begin(job_fence(4, {}), 1);
  // Rank 1 left after round 1 was released on its daemon.
  CHECK(book.ranks_gone(3, {{1, {{"pmix:grove.3:*", 1}}}}).empty());
  CHECK(book.waits_for_gone(3, {}, "pmix:grove.3:*", 2));
  auto out = book.job_ended(3, "grove.3");
  auto answers = effects_of<pmix_fence::Answer>(out);
  REQUIRE(answers.size() == 2);
  CHECK(answers[0].id == own.id);
  CHECK(answers[1].id == shared.id);
  CHECK(answers[0].outcome == Outcome::job_ended);
  // Only the fence shared with a running job is worth a log line, and no dump.
  REQUIRE(count_of<pmix_fence::Notice>(out) == 1);
  CHECK_FALSE(effects_of<pmix_fence::Notice>(out)[0].problem);
  CHECK(book.pending() == 1);                                    // job 4's own
  CHECK_FALSE(book.waits_for_gone(3, {}, "pmix:grove.3:*", 2));  // forgotten with the job
  CHECK(effects_of<pmix_fence::Answer>(book.fence_done(released("pmix:grove.4:*", 1)))[0].id ==
        other.id);
}

TEST_CASE("an engine failure answers each waiting fence with its cause", "[pmix_fences]") {
  PmixFenceBook book(kSelf, 4096);
  auto a = book.begin(job_fence(3, {}), 1);
  FenceDone lost;
  lost.key = {"pmix:grove.3:*", 1};
  lost.status = FenceStatus::participant_lost;
  lost.lost = 2;
  auto answers = effects_of<pmix_fence::Answer>(book.fence_done(lost));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == a.id);
  CHECK(answers[0].outcome == Outcome::unreachable);

  book.begin(job_fence(3, {}), 2);
  FenceDone too_large;
  too_large.key = {"pmix:grove.3:*", 2};
  too_large.status = FenceStatus::too_large;
  auto out = book.fence_done(too_large);
  CHECK(effects_of<pmix_fence::Answer>(out)[0].outcome == Outcome::too_large);
  CHECK(std::get<pmix_fence::Notice>(out[0]).text.find("4096 bytes") != std::string::npos);

  book.begin(job_fence(3, {}), 3);
  FenceDone garbled;
  garbled.key = {"pmix:grove.3:*", 3};
  garbled.release = std::make_shared<const Bytes>(bytes_of("not a release"));
  CHECK(effects_of<pmix_fence::Answer>(book.fence_done(garbled))[0].outcome ==
        Outcome::undecodable);
}
