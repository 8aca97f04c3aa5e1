#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <string>

#include "util/log.h"
#include "util/standard_params.h"

using namespace grove;

namespace {

std::string read_all(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[512];
  while (std::size_t got = std::fread(buffer, 1, sizeof buffer, file))
    text.append(buffer, got);
  return text;
}

}  // namespace

TEST_CASE("verbose output honours each framework's level and prefixes every line", "[log]") {
  ParamRegistry params;
  register_standard_params(params);
  REQUIRE(params.set("rml_base_verbose", "2", ParamOrigin{}));
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink != nullptr);
  Log log("groved vpid 3", params, sink);

  CHECK(log.level("rml") == 2);
  CHECK(log.level("grpcomm") == 0);
  CHECK(log.level("nonexistent") == 0);
  log.verbose("rml", 2, "send %s %d", "direct", 7);
  log.verbose("rml", 3, "too detailed");
  log.verbose("grpcomm", 1, "not enabled");
  log.error("always %s", "shown");

  std::string text = read_all(sink);
  std::fclose(sink);
  CHECK_THAT(text, !Catch::Contains("too detailed"));
  CHECK_THAT(text, !Catch::Contains("not enabled"));
  std::regex line(R"(\[groved vpid 3\] \d+\.\d{6} rml: send direct 7\n)");
  CHECK(std::regex_search(text, line));
  std::regex error_line(R"(\[groved vpid 3\] \d+\.\d{6} error: always shown\n)");
  CHECK(std::regex_search(text, error_line));
}
