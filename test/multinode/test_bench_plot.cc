// grove bench --plot: a PNG of every span, drawn by gnuplot.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "dvm_harness.h"

using namespace grove::test;

TEST_CASE("grove bench --plot draws the spans into a PNG", "[dvm]") {
  Dvm dvm(2);
  REQUIRE(dvm.ready());
  TempDir scratch("grove-plot");
  const std::string png = scratch.path() + "/barrier.png";
  RunResult drawn = dvm.grove({"bench", "barrier", "--count", "20", "--plot", png});
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    // Without gnuplot (CI installs gnuplot-nox) the option says what it needs.
    CHECK(drawn.exit_code == 1);
    CHECK_THAT(drawn.err, Catch::Contains("--plot needs gnuplot"));
    return;
  }
  INFO(drawn.err);
  REQUIRE(drawn.exit_code == 0);
  CHECK_THAT(drawn.out, Catch::Contains("barrier x 20 on 2 daemons"));
  std::ifstream file(png, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK(bytes.size() > 1000);
  CHECK(bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0);

  // An output that cannot be written is named; nothing is drawn on stdout.
  RunResult refused =
      dvm.grove({"bench", "barrier", "--count", "2", "--plot", scratch.path() + "/no/such.png"});
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err,
             Catch::Contains("--plot: cannot write " + scratch.path() + "/no/such.png"));
  CHECK(refused.out.find("PNG") == std::string::npos);
}
