// The control socket's request decoder: every field typed and ranged, every
// bad request an error naming the field (these once killed the controller).
#include <catch2/catch.hpp>

#include "control/control_request.h"

using namespace grove;

namespace {

std::string error_of(std::string_view line) {
  auto decoded = parse_control_request(line);
  return decoded ? std::string() : decoded.error().message;
}

}  // namespace

TEST_CASE("well-formed requests decode to their types", "[control]") {
  CHECK(std::holds_alternative<StopRequest>(*parse_control_request(R"({"cmd":"stop"})")));
  CHECK(std::holds_alternative<StatusRequest>(*parse_control_request(R"({"cmd":"status"})")));
  auto dump = parse_control_request(R"({"cmd":"status","dump":"/tmp/flight"})");
  REQUIRE(dump.ok());
  CHECK(std::get<StatusRequest>(*dump).dump_dir == "/tmp/flight");
  auto relative = parse_control_request(R"({"cmd":"status","dump":"flight"})");
  REQUIRE_FALSE(relative.ok());
  CHECK_THAT(relative.error().message, Catch::Contains("absolute"));
  auto kill = parse_control_request(R"({"cmd":"kill","job":7})");
  REQUIRE(kill.ok());
  CHECK(std::get<KillRequest>(*kill).job == 7);
  CHECK(std::get<KillRequest>(*kill).signal == 0);
  CHECK_FALSE(std::get<KillRequest>(*kill).interrupted);
  auto signal = parse_control_request(R"({"cmd":"kill","job":7,"signal":10,"interrupted":true})");
  REQUIRE(signal.ok());
  CHECK(std::get<KillRequest>(*signal).signal == 10);
  CHECK(std::get<KillRequest>(*signal).interrupted);
  CHECK(std::holds_alternative<JobsRequest>(*parse_control_request(R"({"cmd":"jobs"})")));
  auto input = parse_control_request(R"({"cmd":"stdin","job":3,"data":"AGJ5dGVz/w==","eof":true})");
  REQUIRE(input.ok());
  CHECK(std::get<StdinRequest>(*input).data == std::string("\0bytes\xff", 7));
  CHECK(std::get<StdinRequest>(*input).eof);
  auto all = parse_control_request(R"({"cmd":"run","argv":["cat"],"np":2,"stdin":"all"})");
  REQUIRE(all.ok());
  CHECK(std::get<RunRequest>(*all).stdin_rank == JobSpec::kStdinAll);
  auto rank = parse_control_request(R"({"cmd":"run","argv":["cat"],"np":2,"stdin":"1"})");
  REQUIRE(rank.ok());
  CHECK(std::get<RunRequest>(*rank).stdin_rank == 1);
  auto bench = parse_control_request(R"({"cmd":"bench","kind":"barrier","count":5})");
  REQUIRE(bench.ok());
  CHECK(std::get<BenchRequest>(*bench).count == 5);
  CHECK(std::get<BenchRequest>(*bench).size == 33);
  auto run = parse_control_request(
      R"({"cmd":"run","argv":["sh","-c","true"],"env":["A=1"],"cwd":"/tmp","np":4,)"
      R"("map_by":"node","timeout":9})");
  REQUIRE(run.ok());
  const auto& job = std::get<RunRequest>(*run);
  REQUIRE(job.apps.size() == 1);
  CHECK(job.apps[0].argv == std::vector<std::string>{"sh", "-c", "true"});
  CHECK(job.apps[0].cwd == "/tmp");
  CHECK(job.env == std::vector<std::string>{"A=1"});
  CHECK(job.np() == 4);
  CHECK(job.policy == MapSpec{MapPolicy::node, 0});
  CHECK(job.timeout_s == 9);
  CHECK(job.mpi == "auto");  // both PMIx and PMI, unless asked
  auto pmi2 = parse_control_request(R"({"cmd":"run","argv":["true"],"np":1,"mpi":"pmi2"})");
  REQUIRE(pmi2.ok());
  CHECK(std::get<RunRequest>(*pmi2).mpi == "pmi2");
  auto with_params = parse_control_request(
      R"({"cmd":"run","argv":["true"],"np":1,"params":{"rml_base_radix2":"4"}})");
  REQUIRE(with_params.ok());
  CHECK(std::get<RunRequest>(*with_params).runtime_params ==
        std::vector<std::pair<std::string, std::string>>{{"rml_base_radix2", "4"}});
}

TEST_CASE("requests of the wrong shape are refused, naming the field", "[control]") {
  CHECK_THAT(error_of(R"({"cmd":1})"), Catch::Contains("'cmd' must be a string"));
  CHECK_THAT(error_of(R"({"cmd":"kill","job":"1"})"), Catch::Contains("'job' must be an integer"));
  CHECK_THAT(error_of(R"({"cmd":"kill"})"), Catch::Contains("'job' is required"));
  CHECK_THAT(error_of(R"({"cmd":"kill","job":1,"signal":65})"),
             Catch::Contains("'signal' must be an integer from 0 to 64"));
  CHECK_THAT(error_of(R"({"cmd":"stdin","job":1,"data":"not base64!"})"),
             Catch::Contains("'data' must be base64"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["cat"],"np":1,"stdin":"-1"})"),
             Catch::Contains("'stdin' must be all, none or a rank"));
  CHECK_THAT(error_of(R"({"cmd":"kill","job":1,"interrupted":1})"),
             Catch::Contains("'interrupted' must be true or false"));
  CHECK_THAT(error_of(R"({"cmd":"bench","kind":"barrier","count":"5"})"),
             Catch::Contains("'count' must be an integer from 1 to 1000000"));
  CHECK_THAT(error_of(R"({"cmd":"bench","kind":"nap"})"), Catch::Contains("unknown benchmark"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":-1})"),
             Catch::Contains("'np' must be an integer from 0 to"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":4294967296})"),
             Catch::Contains("'np' must be an integer"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":1.5})"),
             Catch::Contains("'np' must be an integer"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":"true","np":1})"),
             Catch::Contains("'argv' must be an array of strings"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":[],"np":1})"), Catch::Contains("no program"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":1,"params":{"a":1}})"),
             Catch::Contains("'params' must be an object of name: value strings"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":1,"env":["NOEQUALS"]})"),
             Catch::Contains("'env' must be NAME=value"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":1,"map_by":"fast"})"),
             Catch::Contains("fast"));
  CHECK_THAT(error_of(R"({"cmd":"run","argv":["true"],"np":1,"mpi":"pmi3"})"),
             Catch::Contains("--mpi 'pmi3': expected auto, pmix, pmi1 or pmi2"));
  CHECK_THAT(error_of(R"({"cmd":"dance"})"), Catch::Contains("unknown request 'dance'"));
  CHECK_THAT(error_of(R"([1,2])"), Catch::Contains("expected one JSON object"));
  CHECK_THAT(error_of("{not json"), Catch::Contains("expected one JSON object"));
}

TEST_CASE("a grow names how many daemons to add on this host", "[control]") {
  auto grow = parse_control_request(R"({"cmd":"grow","local":3})");
  REQUIRE(grow.ok());
  CHECK(std::get<GrowRequest>(*grow).local == 3);
  for (const char* bad : {R"({"cmd":"grow"})", R"({"cmd":"grow","local":0})",
                          R"({"cmd":"grow","local":257})", R"({"cmd":"grow","local":"2"})"}) {
    INFO(bad);
    auto refused = parse_control_request(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("grow") || Catch::Contains("local"));
  }
}

TEST_CASE("a grow names hosts, each once, with their user and slots", "[control]") {
  auto grow = parse_control_request(
      R"({"cmd":"grow","hosts":[{"name":"node4"},{"name":"node5","user":"hpc","slots":8}]})");
  REQUIRE(grow.ok());
  const GrowRequest& request = std::get<GrowRequest>(*grow);
  CHECK(request.local == 0);
  REQUIRE(request.hosts.size() == 2);
  CHECK(request.hosts[0].name == "node4");
  CHECK(request.hosts[0].slots == 0);
  CHECK(request.hosts[1].user == "hpc");
  CHECK(request.hosts[1].slots == 8);
  auto activate = parse_control_request(R"({"cmd":"grow","activate":true,"nodes":["n3","n4"]})");
  REQUIRE(activate.ok());
  CHECK(std::get<GrowRequest>(*activate).activate);
  CHECK(std::get<GrowRequest>(*activate).nodes == std::vector<std::string>{"n3", "n4"});
  auto every = parse_control_request(R"({"cmd":"grow","activate":true})");
  REQUIRE(every.ok());
  CHECK(std::get<GrowRequest>(*every).nodes.empty());
  for (const char* bad :
       {R"({"cmd":"grow","hosts":[]})", R"({"cmd":"grow","hosts":["node4"]})",
        R"({"cmd":"grow","hosts":[{"name":""}]})",
        R"({"cmd":"grow","hosts":[{"name":"a"},{"name":"a"}]})",
        R"({"cmd":"grow","hosts":[{"name":"a","slots":-1}]})",
        R"({"cmd":"grow","hosts":[{"name":"a","user":7}]})",
        R"({"cmd":"grow","local":2,"hosts":[{"name":"a"}]})",
        R"({"cmd":"grow","hosts":[{"name":"a"}],"activate":true})",
        R"({"cmd":"grow","activate":false})", R"({"cmd":"grow","activate":true,"nodes":"n1"})"}) {
    INFO(bad);
    auto refused = parse_control_request(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("hosts") || Catch::Contains("give one") ||
                                            Catch::Contains("activate") ||
                                            Catch::Contains("nodes"));
  }
}

TEST_CASE("a shrink names hosts, daemons or both, and nothing else", "[control]") {
  auto shrink =
      parse_control_request(R"({"cmd":"shrink","hosts":["node2"],"daemons":[3,4],"force":true})");
  REQUIRE(shrink.ok());
  const auto& typed = std::get<ShrinkRequest>(*shrink);
  CHECK(typed.hosts == std::vector<std::string>{"node2"});
  CHECK(typed.daemons == std::vector<std::uint32_t>{3, 4});
  CHECK(typed.force);
  auto by_number = parse_control_request(R"({"cmd":"shrink","daemons":[1]})");
  REQUIRE(by_number.ok());
  CHECK_FALSE(std::get<ShrinkRequest>(*by_number).force);
  CHECK_THAT(error_of(R"({"cmd":"shrink"})"), Catch::Contains("names no host and no daemon"));
  CHECK_THAT(error_of(R"({"cmd":"shrink","daemons":[-1]})"),
             Catch::Contains("'daemons' must be an array of daemon numbers"));
  CHECK_THAT(error_of(R"({"cmd":"shrink","daemons":[4294967296]})"),
             Catch::Contains("'daemons' must be an array of daemon numbers"));
  CHECK_THAT(error_of(R"({"cmd":"shrink","hosts":"node2"})"),
             Catch::Contains("'hosts' must be an array of strings"));
  CHECK_THAT(error_of(R"({"cmd":"shrink","hosts":["a"],"force":"yes"})"),
             Catch::Contains("'force' must be true or false"));
}
