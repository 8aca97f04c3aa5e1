// debug_fault: the plan's syntax and the trigger that counts release ops.
#include <catch2/catch.hpp>

#include "daemon/fault_trigger.h"
#include "util/fault_plan.h"
#include "util/param_registry.h"
#include "util/standard_params.h"

using namespace grove;

TEST_CASE("a fault plan parses victims, points and counts", "[fault_plan]") {
  auto plan = parse_fault_plan(" 3:release-received , 7:release-delivered:4");
  REQUIRE(plan);
  REQUIRE(plan->size() == 2);
  CHECK((*plan)[0].vpid == 3);
  CHECK((*plan)[0].point == FaultPoint::release_received);
  CHECK((*plan)[0].nth == 1);
  CHECK((*plan)[1].vpid == 7);
  CHECK((*plan)[1].point == FaultPoint::release_delivered);
  CHECK((*plan)[1].nth == 4);
  CHECK((*plan)[1].death == FaultDeath::kill);
  auto crash = parse_fault_plan("2:release-delivered:1:segv,3:release-received:2:kill");
  REQUIRE(crash);
  CHECK((*crash)[0].death == FaultDeath::segv);
  CHECK((*crash)[1].death == FaultDeath::kill);
  CHECK((*crash)[1].nth == 2);
  auto empty = parse_fault_plan("");
  REQUIRE(empty);
  CHECK(empty->empty());
  auto joins = parse_fault_plan("4:join-welcomed,5:join-seeded");
  REQUIRE(joins);
  CHECK((*joins)[0].point == FaultPoint::join_welcomed);
  CHECK((*joins)[1].point == FaultPoint::join_seeded);
  CHECK(fault_point_name(FaultPoint::join_seeded) == "join-seeded");
}

TEST_CASE("a bad fault plan names the entry and what is wrong with it", "[fault_plan]") {
  const std::pair<const char*, const char*> bad[] = {
      {"3", "wrong number of fields"},
      {"3:release-received:1:2", "HOW must be kill or segv"},
      {"3:release-received:1:segv:x", "wrong number of fields"},
      {"x:release-received", "bad vpid"},
      {"-1:release-received", "bad vpid"},
      {"0:release-received", "vpid 0 is the controller"},
      {"3:release-sent", "unknown point 'release-sent'"},
      {"3:release-received:0", "N must be a positive integer"},
      {"3:release-received,", "wrong number of fields"},
      {"3:join-seeded:2", "N must be 1 at a join point"},
  };
  for (const auto& [text, why] : bad) {
    INFO(text);
    auto plan = parse_fault_plan(text);
    REQUIRE_FALSE(plan);
    CHECK_THAT(plan.error().message, Catch::Contains(why));
  }
  // Through the registry, the same error stops a --mca value.
  ParamRegistry registry;
  register_standard_params(registry);
  auto status =
      registry.set("debug_fault", "3:nowhere", ParamOrigin{ParamSourceKind::command_line, "--mca"});
  REQUIRE_FALSE(status);
  CHECK_THAT(status.error().message, Catch::Contains("parameter 'debug_fault'"));
  CHECK_THAT(status.error().message, Catch::Contains("unknown point 'nowhere'"));
}

TEST_CASE("the trigger fires at the Nth distinct release op of its own daemon", "[fault_plan]") {
  auto plan = parse_fault_plan("2:release-received:2,5:release-received:1");
  REQUIRE(plan);
  FaultTrigger trigger(*plan, 2);
  CHECK(trigger.armed());
  ReleaseOpKey first{3, 1, 1};
  ReleaseOpKey second{3, 1, 2};
  CHECK_FALSE(trigger.reached(FaultPoint::release_received, first));
  // A replay of the first op is not a new op.
  CHECK_FALSE(trigger.reached(FaultPoint::release_received, first));
  // Another point counts apart.
  CHECK_FALSE(trigger.reached(FaultPoint::release_delivered, second));
  auto fired = trigger.reached(FaultPoint::release_received, second);
  REQUIRE(fired);
  CHECK(fired->vpid == 2);
  CHECK(fired->nth == 2);
  // Daemons the plan does not name are never armed.
  CHECK_FALSE(FaultTrigger(*plan, 3).armed());
}
