// The one registry of tags: no number given twice, every tag named.
#include <catch2/catch.hpp>

#include <set>
#include <string>

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
