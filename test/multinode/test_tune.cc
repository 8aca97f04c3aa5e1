// grove tune on a running DVM: two sibling DVMs measured and gone again,
// the constants and the advice printed, what it cannot fit refused.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>

#include "dvm_harness.h"

using namespace grove::test;

namespace {
// The session directories and logs in the DVM's session base.
std::vector<std::string> session_entries(const Dvm& dvm) {
  std::vector<std::string> names;
  std::error_code error;
  const auto base = dvm.tmpdir() + "/grove-" + std::to_string(getuid());
  for (const auto& entry : std::filesystem::directory_iterator(base, error))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

TEST_CASE("grove tune fits alpha, c and B on the DVM's hosts and advises the release tree",
          "[dvm]") {
  Dvm dvm(4);
  REQUIRE(dvm.ready());
  // A job's fences make the DVM's typical modex.
  REQUIRE(
      dvm.grove({"run", "-n", "4", "--map-by", "node", binary_from_env("GROVE_PMIX_FENCE_CLIENT"),
                 "--rounds", "2", "--max-bytes", "4096"})
          .exit_code == 0);
  const auto before = session_entries(dvm);
  RunResult tune = dvm.grove(
      {"tune", "--count", "3", "--batches", "2", "--small", "512", "--large", "128KiB", "--json"},
      std::chrono::seconds(120));
  INFO(tune.out << tune.err);
  REQUIRE(tune.exit_code == 0);
  CHECK_THAT(tune.err, Catch::Contains("two DVMs of 4 daemons on the same host"));
  const auto report = nlohmann::json::parse(tune.out);
  CHECK(report["daemons"] == 4);
  for (const char* name : {"flat small", "flat large", "radix-2 small", "radix-2 large"})
    CHECK(report["spans"][name]["median_us"].get<double>() > 0);
  CHECK(report["fit"]["bandwidth_gbit_s"].get<double>() > 0);
  CHECK(report["fit"]["alpha_us"].get<double>() >= 0);
  CHECK(report["fit"]["c_us"].get<double>() >= 0);
  CHECK(report["fit"]["c_range_us"].size() == 2);
  CHECK_THAT(report["advice"]["modex_from"].get<std::string>(),
             Catch::Contains("the mean fence release of this DVM"));
  CHECK(report["advice"]["rml_base_radix2"].get<int>() >= 2);
  CHECK(report["advice"]["grpcomm_low_radix_release"].is_boolean());
  // The siblings stopped and left nothing, their logs included.
  CHECK(session_entries(dvm) == before);
  // The same as text, for a given modex.
  RunResult text =
      // A large payload far above the small one: the growth it measures must
      // stand out of a loaded machine's noise (64 KiB did not, once).
      dvm.grove({"tune", "--count", "3", "--batches", "1", "--large", "512KiB", "--modex", "16KiB"},
                std::chrono::seconds(120));
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("fitted, T(r) = ceil(log_r N) * (alpha + r*c + r*M/B):") &&
                           Catch::Contains("a modex of 16384 bytes (--modex)") &&
                           Catch::Contains("  advice: --mca grpcomm_low_radix_release "));
}

TEST_CASE("grove tune refuses a DVM too small to tell alpha from c, and bad payloads", "[dvm]") {
  Dvm dvm(3);
  REQUIRE(dvm.ready());
  RunResult small = dvm.grove({"tune"});
  CHECK(small.exit_code == 1);
  CHECK_THAT(small.err, Catch::Contains("needs a DVM of 4 daemons (hosts) or more: with 3"));
  RunResult sizes = dvm.grove({"tune", "--small", "64KiB", "--large", "1KiB"});
  CHECK(sizes.exit_code == 1);
  CHECK_THAT(sizes.err, Catch::Contains("the large one larger"));
}
