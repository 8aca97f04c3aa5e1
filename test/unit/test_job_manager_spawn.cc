// The JobManager's side of PMIx_Spawn: a spawned job's launch names its
// parent, its output reaches the spawning job's CLI marked with its job, the
// spawning job ends only after it and fails when it fails; and failing ranks
// are reported (they become PMIx events at the controller). Also which ranks
// grove ps counts as running.
#include <catch2/catch.hpp>

#include <event2/event.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "jobs/job_manager.h"
#include "util/param_registry.h"
#include "util/standard_params.h"

using namespace grove;

namespace {

struct Fixture {
  Fixture() {
    register_standard_params(params);
    base.reset(event_base_new());
    log = std::make_unique<Log>("test", params, sink.get());
    JobManagerHooks hooks;
    hooks.living_daemons = [] { return std::vector<MapDaemon>{{0, 2, "n0"}, {1, 2, "n1"}}; };
    hooks.hostname = [](Vpid vpid) { return "n" + std::to_string(vpid); };
    hooks.broadcast = [this](std::uint16_t tag, const Bytes& payload) {
      broadcasts.push_back({tag, payload});
    };
    hooks.rank_failed = [this](const std::string& nspace, std::uint32_t rank, RankFailure how,
                               int status, const std::string&) {
      failures.push_back({nspace, rank, how, status});
    };
    manager = std::make_unique<JobManager>(base.get(), *log, "grove.9", std::move(hooks));
  }
  // Every launch broadcast so far, decoded.
  std::vector<JobSpec> launches() const {
    std::vector<JobSpec> specs;
    for (const auto& [tag, payload] : broadcasts) {
      if (tag != job_tags::launch) continue;
      auto spec = wire_decode<JobSpec>(payload);
      REQUIRE(spec);
      specs.push_back(*spec);
    }
    return specs;
  }
  std::size_t kills_of(std::uint32_t job) const {
    std::size_t kills = 0;
    for (const auto& [tag, payload] : broadcasts) {
      auto ref = tag == job_tags::kill ? wire_decode<JobRef>(payload) : Result<JobRef>(Error{""});
      kills += ref && ref->job == job ? 1 : 0;
    }
    return kills;
  }

  struct Failure {
    std::string nspace;
    std::uint32_t rank;
    RankFailure how;
    int status;
  };
  ParamRegistry params;
  std::unique_ptr<event_base, decltype(&event_base_free)> base{nullptr, &event_base_free};
  std::unique_ptr<std::FILE, decltype(&std::fclose)> sink{std::tmpfile(), &std::fclose};
  std::unique_ptr<Log> log;  // writes to sink: destroyed before it
  std::unique_ptr<JobManager> manager;
  std::vector<std::pair<std::uint16_t, Bytes>> broadcasts;
  std::vector<Failure> failures;
  std::vector<nlohmann::json> parent_events;
  bool parent_final = false;
};

JobRequest request_of(std::uint32_t np, std::vector<std::string> env = {}) {
  JobRequest request;
  request.apps.push_back(JobApp{{"prog"}, {}, "/work", np});
  request.env = std::move(env);
  return request;
}

}  // namespace

TEST_CASE(
    "a spawned job names its parent, sends its output to the parent's CLI, and the parent "
    "ends after it with its failure",
    "[jobs][spawn]") {
  Fixture f;
  f.manager->submit(request_of(2, {"A=1"}),
                    [&](const nlohmann::json& event, bool final) -> std::optional<std::size_t> {
                      if (!event.is_null()) f.parent_events.push_back(event);
                      f.parent_final = f.parent_final || final;
                      return 0;
                    });
  Result<std::string> child = f.manager->spawn(request_of(3, {"B=2"}), "grove.9.1", 1);
  REQUIRE(child);
  CHECK(*child == "grove.9.2");
  const std::vector<JobSpec> launched = f.launches();
  REQUIRE(launched.size() == 2);
  CHECK(launched[1].parent_nspace == "grove.9.1");
  CHECK(launched[1].parent_rank == 1);
  CHECK(launched[1].env == std::vector<std::string>{"A=1", "B=2"});  // the parent's first
  REQUIRE(launched[1].apps.size() == 1);
  CHECK(launched[1].apps[0].cwd == "/work");
  CHECK(launched[0].parent_nspace.empty());

  f.manager->on_output(JobOutput{2, 0, OutputStream::out, "from the child\n"}, 1);
  REQUIRE_FALSE(f.parent_events.empty());
  CHECK(f.parent_events.back()["text"] == "from the child\n");
  CHECK(f.parent_events.back()["job"] == 2);

  // The parent's ranks are done; it waits for its child.
  f.manager->on_exit(RankExit{1, 0, ExitKind::exited, 0, "", {}});
  f.manager->on_exit(RankExit{1, 1, ExitKind::exited, 0, "", {}});
  CHECK_FALSE(f.parent_final);
  CHECK(f.manager->active() == 2);

  // A child rank fails: reported, the child ends, and the parent with it.
  f.manager->on_exit(RankExit{2, 1, ExitKind::exited, 3, "", {}});
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0].nspace == "grove.9.2");
  CHECK(f.failures[0].rank == 1);
  CHECK(f.failures[0].how == RankFailure::exited);
  CHECK(f.failures[0].status == 3);
  CHECK(f.kills_of(2) == 1);
  f.manager->on_exit(RankExit{2, 0, ExitKind::signaled, 15, "Terminated", {}});
  f.manager->on_exit(RankExit{2, 2, ExitKind::signaled, 15, "Terminated", {}});
  CHECK(f.failures.size() == 1);  // killed because the job was ending: no news
  CHECK(f.parent_final);
  CHECK(f.manager->active() == 0);
  CHECK(f.parent_events.back()["status"] == 3);
  CHECK(f.parent_events.back()["message"].get<std::string>().find("spawned job 2 failed") == 0);
}

TEST_CASE("a spawn from a job that is not running, or is ending, is refused", "[jobs][spawn]") {
  Fixture f;
  CHECK_FALSE(f.manager->spawn(request_of(1), "grove.9.7", 0));
  f.manager->submit(request_of(1), [](const nlohmann::json&, bool) { return std::size_t{0}; });
  f.manager->on_abort(JobAbort{1, 0, 5, "bye"});
  REQUIRE(f.failures.size() == 1);
  CHECK(f.failures[0].how == RankFailure::aborted);
  CHECK(f.failures[0].status == 5);
  Result<std::string> refused = f.manager->spawn(request_of(1), "grove.9.1", 0);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("ending") != std::string::npos);
}

TEST_CASE("a rank counts as running from its daemon's started report to its exit, in any order",
          "[jobs]") {
  Fixture f;
  f.manager->submit(request_of(4), [](const nlohmann::json&, bool) { return std::size_t{0}; });
  auto running = [&] {
    const nlohmann::json jobs = f.manager->jobs_json();
    REQUIRE(jobs.size() == 1);
    return jobs[0]["ranks_running"].get<int>();
  };
  CHECK(running() == 0);  // launched, none exec'd yet
  f.manager->on_started(RanksStarted{1, {0, 1}});
  CHECK(running() == 2);
  // Rank 3's exit overtakes its daemon's report; rank 9 is no rank; job 5 is none.
  f.manager->on_exit(RankExit{1, 3, ExitKind::exited, 0, "", {}});
  f.manager->on_started(RanksStarted{1, {2, 3, 9}});
  f.manager->on_started(RanksStarted{5, {0}});
  CHECK(running() == 3);
  f.manager->on_exit(RankExit{1, 0, ExitKind::exited, 0, "", {}});
  CHECK(running() == 2);
}

TEST_CASE("PMIx_Spawn is answered once every rank of the new job has started", "[jobs][spawn]") {
  // Answered at once, a spawner's PMIx_Connect to the new job could reach
  // its PMIx server before the job was registered there: libpmix 4.2 then
  // released half of the connect (1 run in 300 of openpmix's `dynamic`).
  Fixture f;
  f.manager->submit(request_of(1), [](const nlohmann::json&, bool) { return std::size_t{0}; });
  CHECK(f.manager->next_nspace() == "grove.9.2");
  std::vector<Status> answers;
  auto child = f.manager->spawn(request_of(3), "grove.9.1", 0,
                                [&](Status launched) { answers.push_back(launched); });
  REQUIRE(child);
  CHECK(*child == "grove.9.2");
  CHECK(answers.empty());  // launched, not yet running
  f.manager->on_started(RanksStarted{2, {0, 2}});
  CHECK(answers.empty());
  f.manager->on_started(RanksStarted{2, {1}});
  REQUIRE(answers.size() == 1);
  CHECK(answers[0]);
  f.manager->on_started(RanksStarted{2, {1}});  // a repeat answers nothing more
  CHECK(answers.size() == 1);

  // A job that fails before all its ranks run: the spawner hears why.
  std::vector<Status> failed;
  auto doomed = f.manager->spawn(request_of(2), "grove.9.1", 0,
                                 [&](Status launched) { failed.push_back(launched); });
  REQUIRE(doomed);
  f.manager->on_started(RanksStarted{3, {0}});
  f.manager->on_exit(RankExit{3, 1, ExitKind::failed_start, 127, "cannot execute 'prog'", {}});
  REQUIRE(failed.size() == 1);
  CHECK_FALSE(failed[0]);
  CHECK_THAT(failed[0].error().message,
             Catch::Contains("the spawned job ended before all its ranks started"));
}
