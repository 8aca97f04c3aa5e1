// Base64 for binary data in the control socket's JSON (grove run's stdin).
#include <catch2/catch.hpp>

#include "util/base64.h"

using namespace grove;

TEST_CASE("base64 round-trips any bytes and refuses what is not base64", "[base64]") {
  CHECK(to_base64("") == "");
  CHECK(to_base64("f") == "Zg==");
  CHECK(to_base64("foobar") == "Zm9vYmFy");
  std::string all;
  for (int byte = 0; byte < 256; ++byte)
    all += static_cast<char>(byte);
  CHECK(from_base64(to_base64(all)) == all);
  CHECK(from_base64("Zg==") == "f");
  CHECK_FALSE(from_base64("Zg="));
  CHECK_FALSE(from_base64("Z!=="));
  CHECK_FALSE(from_base64("Zg==Zg"));
}
