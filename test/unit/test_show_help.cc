#include <catch2/catch.hpp>

#include "support/temp_dir.h"
#include "util/show_help.h"

using namespace grove;

TEST_CASE("help text parses into topics with once markers", "[help]") {
  auto topics = parse_help_text(
      "# file comment\n"
      "[first]\n"
      "Hello %s,\n"
      "## a comment inside\n"
      "you are %s.\n"
      "\n\n"
      "[second] once\n"
      "Only once: 100%% sure.\n");
  REQUIRE(topics.size() == 2);
  CHECK(topics["first"].text == "Hello %s,\nyou are %s.\n");
  CHECK_FALSE(topics["first"].once);
  CHECK(topics["second"].once);
}

TEST_CASE("substitution fills %s in order and marks missing arguments", "[help]") {
  CHECK(substitute_help_args("a=%s b=%s", {"1", "2"}) == "a=1 b=2");
  CHECK(substitute_help_args("a=%s b=%s", {"1"}) == "a=1 b=<missing>");
  CHECK(substitute_help_args("100%% of %s", {"x"}) == "100% of x");
  CHECK(substitute_help_args("trailing %", {}) == "trailing %");
}

TEST_CASE("the catalog renders topics from the shipped help files", "[help]") {
  HelpCatalog catalog(default_help_dirs());
  auto text = catalog.render("help-grpcomm.txt", "release-topology-mismatch",
                             {"vpid 3", "vpid 1", "release", "2", "routing", "64"});
  REQUIRE(text);
  CHECK_THAT(*text, Catch::Contains("frame topology:     release (radix 2)"));
  CHECK_THAT(*text, Catch::Contains("configured:         routing (radix 64)"));

  // A once-only topic renders the first time and then never again.
  auto first = catalog.render("help-grpcomm.txt", "release-radix-noop", {"4", "4"});
  REQUIRE(first);
  CHECK_THAT(*first, Catch::Contains("rml_base_radix2: 4"));
  CHECK_FALSE(catalog.render("help-grpcomm.txt", "release-radix-noop", {"4", "4"}));
  // Ordinary topics render every time.
  CHECK(catalog.render("help-grpcomm.txt", "release-topology-mismatch", {}));
}

TEST_CASE("missing files and topics produce a fallback, not a crash", "[help]") {
  grove::test::TempDir scratch("grove-help");
  scratch.write("help-test.txt", "[present]\nhere\n");
  HelpCatalog catalog({scratch.path()});

  auto missing_file = catalog.render("help-absent.txt", "anything", {"detail-one"});
  REQUIRE(missing_file);
  CHECK_THAT(*missing_file, Catch::Contains("help-absent.txt"));
  CHECK_THAT(*missing_file, Catch::Contains(scratch.path()));
  CHECK_THAT(*missing_file, Catch::Contains("detail-one"));

  auto missing_topic = catalog.render("help-test.txt", "absent", {});
  REQUIRE(missing_topic);
  CHECK_THAT(*missing_topic, Catch::Contains("[absent]"));
  CHECK_THAT(*missing_topic, Catch::Contains("missing from help file 'help-test.txt'"));

  CHECK(*catalog.render("help-test.txt", "present", {}) == "here\n");
}
