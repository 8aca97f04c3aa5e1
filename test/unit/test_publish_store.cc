// The DVM's publish/lookup store (src/pmix/publish_store.h), driven directly.
#include <catch2/catch.hpp>

#include "pmix/publish_store.h"

using namespace grove;

namespace {

Bytes bytes_of(const std::string& text) {
  Bytes out;
  for (char c : text)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

PublishProc proc(const std::string& nspace, std::uint32_t rank, std::uint32_t daemon = 0) {
  return PublishProc{nspace, rank, daemon};
}

PublishStatus put(PublishStore& store, const PublishProc& who, const std::string& key,
                  PublishRange range = PublishRange::session,
                  PublishPersistence persistence = PublishPersistence::session) {
  std::vector<LookupAnswer> completed;
  return store.publish(who, range, persistence, {{key, bytes_of("v:" + key)}}, completed);
}

LookupAnswer get(PublishStore& store, const PublishProc& who, std::vector<std::string> keys,
                 std::optional<PublishRange> range = std::nullopt) {
  auto answer = store.lookup(LookupRequest{1, who, std::move(keys), range, 0});
  REQUIRE(answer);
  return *answer;
}

}  // namespace

TEST_CASE("a published value is found by any rank of any job, with its publisher") {
  PublishStore store;
  REQUIRE(put(store, proc("job.1", 0), "port") == PublishStatus::ok);
  LookupAnswer answer = get(store, proc("job.2", 5, 3), {"port"});
  CHECK(answer.status == PublishStatus::ok);
  REQUIRE(answer.found.size() == 1);
  CHECK(answer.found[0].key == "port");
  CHECK(answer.found[0].nspace == "job.1");
  CHECK(answer.found[0].rank == 0);
  CHECK(answer.found[0].value == bytes_of("v:port"));
  CHECK(get(store, proc("job.1", 1), {"other"}).status == PublishStatus::not_found);
  // Some keys found: those come back, in the request's order.
  REQUIRE(put(store, proc("job.1", 0), "second") == PublishStatus::ok);
  answer = get(store, proc("job.1", 1), {"second", "absent", "port"});
  REQUIRE(answer.found.size() == 2);
  CHECK(answer.found[0].key == "second");
  CHECK(answer.found[1].key == "port");
}

TEST_CASE("ranges limit who sees a value, and a key is published once per audience") {
  PublishStore store;
  REQUIRE(put(store, proc("a", 0, 1), "n", PublishRange::nspace) == PublishStatus::ok);
  REQUIRE(put(store, proc("a", 0, 1), "l", PublishRange::local) == PublishStatus::ok);
  REQUIRE(put(store, proc("a", 0, 1), "p", PublishRange::proc) == PublishStatus::ok);
  CHECK(get(store, proc("a", 7, 2), {"n"}).status == PublishStatus::ok);
  CHECK(get(store, proc("b", 0, 1), {"n"}).status == PublishStatus::not_found);
  CHECK(get(store, proc("b", 0, 1), {"l"}).status == PublishStatus::ok);
  CHECK(get(store, proc("a", 1, 2), {"l"}).status == PublishStatus::not_found);
  CHECK(get(store, proc("a", 0, 1), {"p"}).status == PublishStatus::ok);
  CHECK(get(store, proc("a", 1, 1), {"p"}).status == PublishStatus::not_found);

  // Another job may use the same key in its own nspace range, not twice in one.
  CHECK(put(store, proc("b", 0), "n", PublishRange::nspace) == PublishStatus::ok);
  CHECK(put(store, proc("a", 3), "n", PublishRange::nspace) == PublishStatus::duplicate_key);
  REQUIRE(put(store, proc("a", 0), "s") == PublishStatus::ok);
  CHECK(put(store, proc("b", 0), "s") == PublishStatus::duplicate_key);
  // A lookup may ask for one range only.
  CHECK(get(store, proc("a", 0), {"s"}, PublishRange::nspace).status == PublishStatus::not_found);
  CHECK(get(store, proc("a", 0), {"s"}, PublishRange::session).status == PublishStatus::ok);

  std::vector<LookupAnswer> completed;
  CHECK(store.publish(proc("a", 0), PublishRange::session, PublishPersistence::session,
                      {{"x", {}}, {"x", {}}}, completed) == PublishStatus::bad_param);
  CHECK(store.publish(proc("a", 0), PublishRange::session, PublishPersistence::session, {{"", {}}},
                      completed) == PublishStatus::bad_param);
  CHECK(store.size() == 5);
}

TEST_CASE("a waiting lookup is answered by the publication that completes it") {
  PublishStore store;
  CHECK_FALSE(store.lookup(LookupRequest{41, proc("b", 1), {"x", "y"}, std::nullopt, 2}));
  CHECK_FALSE(store.lookup(LookupRequest{42, proc("b", 2), {"y"}, std::nullopt, 1}));
  CHECK(store.parked() == 2);
  std::vector<LookupAnswer> completed;
  REQUIRE(store.publish(proc("a", 0), PublishRange::session, PublishPersistence::session,
                        {{"y", bytes_of("Y")}}, completed) == PublishStatus::ok);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0].id == 42);
  CHECK(completed[0].found.at(0).value == bytes_of("Y"));
  completed.clear();
  REQUIRE(store.publish(proc("a", 0), PublishRange::session, PublishPersistence::session,
                        {{"x", bytes_of("X")}}, completed) == PublishStatus::ok);
  REQUIRE(completed.size() == 1);
  CHECK(completed[0].id == 41);
  CHECK(completed[0].found.size() == 2);
  CHECK(store.parked() == 0);

  // Given up: what was found so far, as not found.
  CHECK_FALSE(store.lookup(LookupRequest{43, proc("b", 1), {"x", "z"}, std::nullopt, 2}));
  auto cancelled = store.cancel(43);
  REQUIRE(cancelled);
  CHECK(cancelled->status == PublishStatus::not_found);
  CHECK(cancelled->found.size() == 1);
  CHECK_FALSE(store.cancel(43));
}

TEST_CASE("persistence: read once, the publisher's life, its job's life, the DVM's") {
  PublishStore store;
  REQUIRE(put(store, proc("a", 0), "once", PublishRange::session, PublishPersistence::first_read) ==
          PublishStatus::ok);
  CHECK(get(store, proc("b", 0), {"once"}).status == PublishStatus::ok);
  CHECK(get(store, proc("b", 0), {"once"}).status == PublishStatus::not_found);

  REQUIRE(put(store, proc("a", 0), "proc", PublishRange::session, PublishPersistence::proc) ==
          PublishStatus::ok);
  REQUIRE(put(store, proc("a", 1), "app", PublishRange::session, PublishPersistence::app) ==
          PublishStatus::ok);
  REQUIRE(put(store, proc("a", 1), "dvm") == PublishStatus::ok);
  CHECK_FALSE(store.lookup(LookupRequest{9, proc("a", 1), {"never"}, std::nullopt, 1}));
  CHECK(store.proc_ended("a", 0).empty());
  CHECK(get(store, proc("b", 0), {"proc"}).status == PublishStatus::not_found);
  CHECK(get(store, proc("b", 0), {"app"}).status == PublishStatus::ok);
  CHECK(store.job_ended("a") == std::vector<std::uint64_t>{9});
  CHECK(get(store, proc("b", 0), {"app"}).status == PublishStatus::not_found);
  CHECK(get(store, proc("b", 0), {"dvm"}).status == PublishStatus::ok);
  CHECK(store.parked() == 0);
}

TEST_CASE("unpublish removes the caller's own values only") {
  PublishStore store;
  REQUIRE(put(store, proc("a", 0), "k1") == PublishStatus::ok);
  REQUIRE(put(store, proc("a", 0), "k2", PublishRange::nspace) == PublishStatus::ok);
  CHECK(store.unpublish(proc("a", 1), {"k1"}, std::nullopt) == PublishStatus::not_found);
  CHECK(store.unpublish(proc("a", 0), {"k1"}, PublishRange::nspace) == PublishStatus::not_found);
  CHECK(store.unpublish(proc("a", 0), {"k1"}, std::nullopt) == PublishStatus::ok);
  CHECK(store.size() == 1);
  CHECK(store.unpublish(proc("a", 0), {}, std::nullopt) == PublishStatus::ok);
  CHECK(store.size() == 0);
}
