// The one registry of tags: no number given twice, every tag named.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "grpcomm/tags.h"
#include "rml/tag_registry.h"

using namespace grove;

TEST_CASE("every tag has one number and a name of its own", "[tags]") {
  std::set<std::uint16_t> numbers;
  std::set<std::string> names;
  for (const TagInfo& info : all_tags()) {
    INFO("tag " << info.tag << " " << info.name);
    CHECK(numbers.insert(info.tag).second);
    CHECK(names.insert(std::string(info.name)).second);
    CHECK(tag_name(info.tag) == info.name);
    CHECK(info.name != "unknown");
  }
  // The daemon's tags are named too, not lumped together.
  CHECK(tag_name(job_tags::output) == "job-output");
  CHECK(tag_name(pmix_tags::modex_reply) == "modex-reply");
  CHECK(tag_name(daemon_tags::heartbeat) == "heartbeat");
  CHECK(tag_name(job_tags::launch) == "launch");
  CHECK(tag_name(999) == "unknown");
}

TEST_CASE("a delivery goes where its tag routes it", "[tags]") {
  // Exactly one tag ends a fence and one ends an op; the engine's own
  // bookkeeping broadcasts never reach the driver; every other tag does.
  int fence_enders = 0;
  int op_enders = 0;
  for (const TagInfo& info : all_tags()) {
    INFO("tag " << info.name);
    const DeliveryRoute route = delivery_route(info.tag);
    if (route.ends == DeliveryEnds::fence) ++fence_enders;
    if (route.ends == DeliveryEnds::op) ++op_enders;
    const bool engine_only = info.tag == tags::membership || info.tag == tags::op_abort;
    CHECK(route.to_driver == !engine_only);
  }
  CHECK(fence_enders == 1);
  CHECK(op_enders == 1);
  CHECK(delivery_route(tags::fence_release).ends == DeliveryEnds::fence);
  CHECK(delivery_route(tags::op_abort).ends == DeliveryEnds::op);
  CHECK(delivery_route(tags::membership).ends == DeliveryEnds::nothing);
}
