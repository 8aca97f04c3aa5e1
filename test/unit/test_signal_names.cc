// Signal names as users type them to grove kill --signal.
#include <catch2/catch.hpp>

#include <signal.h>

#include "util/signal_names.h"

using namespace grove;

TEST_CASE("signals are named as kill(1) names them, with or without SIG, any case", "[signal]") {
  CHECK(*parse_signal("TERM") == SIGTERM);
  CHECK(*parse_signal("SIGUSR1") == SIGUSR1);
  CHECK(*parse_signal("usr2") == SIGUSR2);
  CHECK(*parse_signal("sigkill") == SIGKILL);
  CHECK(*parse_signal("10") == 10);
  CHECK(*parse_signal("64") == 64);
  CHECK(signal_name(SIGUSR1) == "USR1");
  CHECK(signal_name(SIGINT) == "INT");
}

TEST_CASE("an unknown signal is an error naming it", "[signal]") {
  for (const char* bad : {"", "TERMS", "0", "65", "-9", "9x", "SIG"}) {
    auto parsed = parse_signal(bad);
    REQUIRE_FALSE(parsed);
    CHECK_THAT(parsed.error().message,
               Catch::StartsWith(std::string("unknown signal '") + bad + "'"));
  }
}
