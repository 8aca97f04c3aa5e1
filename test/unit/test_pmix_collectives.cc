// A daemon's PMIx connect and group book against scripted inputs.
#include <catch2/catch.hpp>

#include "daemon/control_plane/pmix_collectives.h"
#include "grpcomm/messages.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::effects_of;
using pmix_collective::Outcome;

namespace {

PmixCollectiveBook::Call connect_call(bool registers = true) {
  PmixCollectiveBook::Call call;
  call.kind = registers ? "connect" : "disconnect";
  call.jobs = {{3, "grove.3", {}}, {4, "grove.4", {1}}};
  call.hosts = VpidSet::span(0, 2);
  call.registers = registers;
  return call;
}

FenceDone released(const std::string& signature, std::uint64_t round,
                   std::vector<std::pair<Vpid, Bytes>> contributions = {}) {
  FenceRelease release;
  release.key = {signature, round};
  release.contributions = std::move(contributions);
  FenceDone done;
  done.key = release.key;
  done.release = std::make_shared<const Bytes>(encode(release));
  return done;
}

}  // namespace

TEST_CASE("a connect contributes, then registers its jobs before its answer",
          "[pmix_collectives]") {
  PmixFenceBook gone(1, 1 << 20);
  PmixCollectiveBook book(1);
  auto begun = book.begin(connect_call(), 2, gone);  // it joins round 2
  auto contributions = effects_of<pmix_collective::Contribute>(begun.outbox);
  REQUIRE(contributions.size() == 1);
  const std::string signature = "pmix:grove.3:connect|pmix:grove.3:*|pmix:grove.4:1";
  CHECK(contributions[0].request.signature == signature);
  CHECK(contributions[0].request.data.empty());                 // no context id asked for
  CHECK(book.collective_done(released(signature, 1)).empty());  // an older round: not this one
  auto out = book.collective_done(released(signature, 2));
  auto registering = effects_of<pmix_collective::RegisterThenAnswer>(out);
  REQUIRE(registering.size() == 1);
  CHECK(registering[0].id == begun.id);
  CHECK(registering[0].nspaces == std::vector<std::string>{"grove.3", "grove.4"});
  CHECK(book.pending() == 0);
}

TEST_CASE("a disconnect is answered as its round ends; a failed round says why",
          "[pmix_collectives]") {
  PmixFenceBook gone(1, 1 << 20);
  PmixCollectiveBook book(1);
  auto begun = book.begin(connect_call(false), 1, gone);
  const std::string signature = "pmix:grove.3:disconnect|pmix:grove.3:*|pmix:grove.4:1";
  auto answers = effects_of<pmix_collective::Answer>(book.collective_done(released(signature, 1)));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == begun.id);
  CHECK(answers[0].outcome == Outcome::done);

  book.begin(connect_call(false), 2, gone);
  FenceDone lost;
  lost.key = {signature, 2};
  lost.status = FenceStatus::participant_lost;
  auto out = book.collective_done(lost);
  CHECK(effects_of<pmix_collective::Notice>(out).size() == 1);
  CHECK(effects_of<pmix_collective::Answer>(out)[0].outcome == Outcome::unreachable);
}

TEST_CASE("a group's context id is the lowest participating daemon's offer", "[pmix_collectives]") {
  PmixFenceBook gone(1, 1 << 20);
  PmixCollectiveBook first(1), second(2);
  PmixCollectiveBook::Call call;
  call.kind = "group-construct:g";
  call.jobs = {{3, "grove.3", {}}};
  call.hosts = VpidSet::span(1, 2);
  call.wants_context_id = true;
  auto a = first.begin(call, 1, gone);
  auto b = second.begin(call, 1, gone);
  const Bytes offer1 = effects_of<pmix_collective::Contribute>(a.outbox)[0].request.data;
  const Bytes offer2 = effects_of<pmix_collective::Contribute>(b.outbox)[0].request.data;
  CHECK_FALSE(offer1.empty());
  CHECK(offer1 != offer2);
  const std::string signature = "pmix:grove.3:group-construct:g|pmix:grove.3:*";
  auto done = released(signature, 1, {{1, offer1}, {2, offer2}});
  auto one = effects_of<pmix_collective::RegisterThenAnswer>(first.collective_done(done));
  auto two = effects_of<pmix_collective::RegisterThenAnswer>(second.collective_done(done));
  REQUIRE(one.size() == 1);
  REQUIRE(two.size() == 1);
  CHECK(one[0].context_id == (std::uint64_t{1} << 32 | 1));
  CHECK(two[0].context_id == one[0].context_id);  // every daemon agrees

  // A release without an offer (none was made): an error, not a made-up id.
  first.begin(call, 2, gone);
  auto out = first.collective_done(released(signature, 2));
  CHECK(effects_of<pmix_collective::Answer>(out)[0].outcome == Outcome::no_context);
}

TEST_CASE("a collective that waits for a departed rank, or names an ended job, is answered",
          "[pmix_collectives]") {
  PmixFenceBook gone(1, 1 << 20);
  PmixCollectiveBook book(1);
  auto waiting = book.begin(connect_call(), 1, gone);
  // Rank 1 of grove.4 left before taking part: the connect cannot complete.
  gone.ranks_gone(4, {{1, {}}});
  auto answers = effects_of<pmix_collective::Answer>(book.ranks_gone(gone));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].id == waiting.id);
  CHECK(answers[0].outcome == Outcome::rank_gone);
  // A new one over that rank is refused at once, without contributing.
  auto refused = book.begin(connect_call(), 1, gone);
  CHECK(effects_of<pmix_collective::Contribute>(refused.outbox).empty());
  CHECK(effects_of<pmix_collective::Answer>(refused.outbox)[0].outcome == Outcome::rank_gone);

  PmixFenceBook none(1, 1 << 20);
  auto shared = book.begin(connect_call(), 1, none);
  auto out = book.job_ended("grove.4");
  CHECK(effects_of<pmix_collective::Answer>(out)[0].id == shared.id);
  CHECK(effects_of<pmix_collective::Answer>(out)[0].outcome == Outcome::job_ended);
  CHECK(effects_of<pmix_collective::Notice>(out).size() == 1);  // grove.3's ranks waited in it
  CHECK(book.pending() == 0);
}

TEST_CASE("PMIX_TIMEOUT on a collective is named in the log", "[pmix_collectives]") {
  PmixFenceBook gone(1, 1 << 20);
  PmixCollectiveBook book(1);
  PmixCollectiveBook::Call call = connect_call();
  call.timeout_seconds = 5;
  auto notices = effects_of<pmix_collective::Notice>(book.begin(call, 1, gone).outbox);
  REQUIRE(notices.size() == 1);
  CHECK_THAT(notices[0].text, Catch::Contains("PMIX_TIMEOUT (5 s)"));
}
