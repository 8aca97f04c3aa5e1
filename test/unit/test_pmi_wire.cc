// The simple PMI wire formats and PMI_process_mapping: what a client's bytes
// decode to, what a reply encodes to, and that every mapping grove makes
// expands, MPICH's way, to each rank's node.
#include <catch2/catch.hpp>

#include "pmi/pmi_wire.h"
#include "pmi/process_mapping.h"

using namespace grove;
using namespace grove::pmi;

TEST_CASE("PMI-1 lines decode as they come, a byte at a time or several at once") {
  Decoder decoder;
  const std::string input =
      "cmd=init pmi_version=1 pmi_subversion=1\ncmd=put kvsname=k key=a "
      "value=x=y\n\ncmd=barrier_in\n";
  std::vector<Command> commands;
  for (char c : input) {
    decoder.feed(std::string_view(&c, 1));
    for (;;) {
      auto next = decoder.next();
      REQUIRE(next);
      if (!*next) break;
      commands.push_back(**next);
    }
  }
  REQUIRE(commands.size() == 3);
  CHECK(commands[0].name == "init");
  CHECK(*commands[0].find("pmi_version") == "1");
  CHECK(commands[1].name == "put");
  CHECK(*commands[1].find("value") == "x=y");  // a value runs to the next space
  CHECK(commands[2].name == "barrier_in");
  CHECK(commands[2].pairs.empty());
  CHECK(decoder.buffered() == 0);
}

TEST_CASE("PMI-1 mcmd=spawn runs to endcmd") {
  Decoder decoder;
  decoder.feed("mcmd=spawn\nnprocs=2\nexecname=/bin/true\nargcnt=0\n");
  auto first = decoder.next();
  REQUIRE(first);
  CHECK(!*first);  // not yet
  decoder.feed("endcmd\ncmd=finalize\n");
  auto spawn = decoder.next();
  REQUIRE(spawn);
  REQUIRE(*spawn);
  CHECK((*spawn)->name == "spawn");
  CHECK(*(*spawn)->find("execname") == "/bin/true");
  auto finalize = decoder.next();
  REQUIRE(finalize);
  CHECK((*finalize)->name == "finalize");
}

TEST_CASE("Malformed PMI-1 input is an error naming the problem") {
  for (std::string bad : {"cmd=init pmi_version\n", "key=value cmd=init\n", "=x\n", "cmd= a=b\n"}) {
    Decoder decoder;
    decoder.feed(bad);
    auto next = decoder.next();
    INFO(bad);
    REQUIRE(!next);
    CHECK(!next.error().message.empty());
  }
  Decoder endless;
  endless.feed(std::string(Decoder::kMaxCommand + 1, 'a'));
  auto next = endless.next();
  REQUIRE(!next);
  CHECK(next.error().message.find("longer than") != std::string::npos);
}

TEST_CASE("PMI-2 commands: a six-byte length, pairs ended by ';', ';;' for a ';'") {
  Decoder decoder;
  decoder.use(Wire::v2);
  const std::string body = "cmd=kvs-put;key=a;;b;value=1;;2;;;";
  std::string length = std::to_string(body.size());
  length.resize(6, ' ');
  decoder.feed(length + body.substr(0, 5));
  auto partial = decoder.next();
  REQUIRE(partial);
  CHECK(!*partial);
  decoder.feed(body.substr(5));
  auto command = decoder.next();
  REQUIRE(command);
  REQUIRE(*command);
  CHECK((*command)->name == "kvs-put");
  CHECK(*(*command)->find("key") == "a;b");
  CHECK(*(*command)->find("value") == "1;2;");
  // Its own encoding decodes to the same.
  Decoder again;
  again.use(Wire::v2);
  again.feed(encode_v2("kvs-put", {{"key", "a;b"}, {"value", "1;2;"}}));
  auto round = again.next();
  REQUIRE(round);
  CHECK(*(*round)->find("value") == "1;2;");
}

TEST_CASE("Malformed PMI-2 input is an error naming the problem") {
  for (std::string bad : {std::string("12a   cmd=x;"), std::string("   12 cmd=x;"),
                          std::string("0     "), std::string("999999"), std::string("5     cmd=x"),
                          std::string("6     key=x;"), std::string("8     cmd=x;ab")}) {
    Decoder decoder;
    decoder.use(Wire::v2);
    decoder.feed(bad + std::string(8, ' '));
    auto next = decoder.next();
    INFO(bad);
    CHECK(!next);
  }
}

TEST_CASE("Replies encode in each wire's form") {
  CHECK(encode_v1("maxes", {{"rc", "0"}, {"vallen_max", "960"}}) ==
        "cmd=maxes rc=0 vallen_max=960\n");
  CHECK(encode_v2("job-getid-response", {{"rc", "0"}, {"jobid", "j;1"}}) ==
        "39    cmd=job-getid-response;rc=0;jobid=j;;1;");
  CHECK(v1_safe("abc=d"));
  CHECK(!v1_safe("a b"));
}

namespace {

// The node of each rank when `ranks` go over `nodes` nodes of `slots` slots,
// as grove maps them.
std::vector<std::uint32_t> by_slot(std::uint32_t ranks, std::uint32_t nodes, std::uint32_t slots) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < ranks; ++r)
    out.push_back(std::min(r / slots, nodes - 1));
  return out;
}
std::vector<std::uint32_t> by_node(std::uint32_t ranks, std::uint32_t nodes) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < ranks; ++r)
    out.push_back(r % nodes);
  return out;
}

}  // namespace

TEST_CASE("PMI_process_mapping is exact and short for grove's mappings") {
  // --map-by node: one block, repeated.
  auto blocks = mapping_blocks(by_node(10, 4));
  CHECK(format_mapping(blocks) == "(vector,(0,4,1))");
  CHECK(expand_mapping(blocks, 10) == by_node(10, 4));
  // --map-by slot, full nodes.
  blocks = mapping_blocks(by_slot(8, 2, 4));
  CHECK(format_mapping(blocks) == "(vector,(0,2,4))");
  // --map-by slot, the last node part full.
  blocks = mapping_blocks(by_slot(7, 2, 4));
  CHECK(format_mapping(blocks) == "(vector,(0,1,4),(1,1,3))");
  CHECK(expand_mapping(blocks, 7) == by_slot(7, 2, 4));
  // ppr:2:node over 3 nodes, round robin by pairs.
  std::vector<std::uint32_t> ppr{0, 0, 1, 1, 2, 2};
  CHECK(format_mapping(mapping_blocks(ppr)) == "(vector,(0,3,2))");
  // An irregular placement is still exact.
  std::vector<std::uint32_t> odd{0, 1, 1, 0, 2, 2, 2, 1};
  CHECK(expand_mapping(mapping_blocks(odd), 8) == odd);
  // A single rank.
  CHECK(format_mapping(mapping_blocks({0})) == "(vector,(0,1,1))");
}

TEST_CASE("PMI_process_mapping round-trips over many placements") {
  // Every placement of 7 ranks over 3 nodes (numbered by first appearance).
  std::uint32_t checked = 0;
  for (std::uint32_t code = 0; code < 2187; ++code) {  // 3^7
    std::vector<std::string> hosts;
    std::uint32_t rest = code;
    for (int r = 0; r < 7; ++r, rest /= 3)
      hosts.push_back("h" + std::to_string(rest % 3));
    const std::vector<std::uint32_t> nodes = number_nodes(hosts);
    CHECK(nodes[0] == 0);
    auto blocks = mapping_blocks(nodes);
    INFO(format_mapping(blocks));
    REQUIRE(expand_mapping(blocks, 7) == nodes);
    REQUIRE(parse_mapping(format_mapping(blocks)) == blocks);
    ++checked;
  }
  CHECK(checked == 2187);
}

TEST_CASE("PMI-2 lengths right-aligned (MPICH 4.1's %6u) decode as left-aligned ones do") {
  Decoder decoder;
  decoder.use(Wire::v2);
  decoder.feed("     8cmd=abc;");
  auto command = decoder.next();
  REQUIRE(command);
  REQUIRE(*command);
  CHECK((*command)->name == "abc");
  for (std::string bad :
       {std::string("  1 2 cmd=x;"), std::string("      "), std::string(" 9  9 cmd=x;")}) {
    Decoder again;
    again.use(Wire::v2);
    again.feed(bad + std::string(12, ' '));
    INFO(bad);
    CHECK(!again.next());
  }
}

TEST_CASE("Values with spaces: an mcmd line's runs to its end, an abort message takes its words") {
  Decoder decoder;
  decoder.feed(
      "mcmd=spawn\nexecname=/opt/my prog\narg1=a b  c\nendcmd\n"
      "cmd=abort exitcode=2 message=application called MPI_Abort(MPI_COMM_WORLD, 2)\n");
  auto spawn = decoder.next();
  REQUIRE(spawn);
  REQUIRE(*spawn);
  CHECK(*(*spawn)->find("execname") == "/opt/my prog");
  CHECK(*(*spawn)->find("arg1") == "a b  c");
  auto abort = decoder.next();
  REQUIRE(abort);
  REQUIRE(*abort);
  CHECK(*(*abort)->find("exitcode") == "2");
  CHECK(*(*abort)->find("message") == "application called MPI_Abort(MPI_COMM_WORLD, 2)");
}

TEST_CASE("parse_mapping refuses what is not a vector mapping") {
  for (const char* bad : {"", "(vector", "(vector,(1,2))", "(vector,(1,2,3)", "(list,(0,1,1))",
                          "(vector,(0,1,x))", "(vector,(0,1,1),)"})
    CHECK(!parse_mapping(bad));
  CHECK(parse_mapping("(vector)") == std::vector<MappingBlock>{});
}
