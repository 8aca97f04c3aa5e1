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

TEST_CASE("a kind of line passes a burst per window; the rest are counted and said", "[log]") {
  constexpr TimeNs kS = 1'000'000'000;
  LineLimiter limiter(3, 10 * kS);
  for (int i = 0; i < 3; ++i) {
    auto verdict = limiter.admit("refused", i);
    CHECK(verdict.pass);
    CHECK(verdict.left_out == 0);
  }
  for (int i = 0; i < 100; ++i)
    CHECK_FALSE(limiter.admit("refused", kS + i).pass);
  // Another kind has its own burst.
  CHECK(limiter.admit("accept", 2 * kS).pass);
  // Not before the window ends.
  CHECK(limiter.flush(9 * kS).empty());
  // The first after the window says what was left out...
  auto later = limiter.admit("refused", 10 * kS);
  CHECK(later.pass);
  CHECK(later.left_out == 100);
  // ...or a flush does, once.
  for (int i = 0; i < 7; ++i)
    limiter.admit("refused", 11 * kS);
  auto flushed = limiter.flush(20 * kS);
  REQUIRE(flushed.size() == 1);
  CHECK(flushed[0].kind == "refused");
  CHECK(flushed[0].count == 5);  // 2 of the 7 passed
  CHECK(limiter.flush(30 * kS).empty());
}

TEST_CASE("limited errors are written up to the burst, then counted", "[log]") {
  ParamRegistry params;
  register_standard_params(params);
  std::FILE* sink = std::tmpfile();
  REQUIRE(sink != nullptr);
  Log log("groved vpid 3", params, sink);
  for (int i = 0; i < 50; ++i)
    log.error_limited("test: stranger", "a stranger's line %d", i);
  const std::string text = read_all(sink);
  std::fclose(sink);
  std::size_t lines = 0;
  for (char c : text)
    lines += c == '\n' ? 1 : 0;
  CHECK(lines == 5);
  CHECK(text.find("a stranger's line 4") != std::string::npos);
  CHECK(text.find("a stranger's line 5") == std::string::npos);
}
