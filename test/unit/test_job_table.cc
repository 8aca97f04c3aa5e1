// The controller's job table, driven by scripted inputs: launches and their
// refusals, each way a job ends (and what its CLI, the daemons and PMIx
// hear), the output window, grove run's input, clean exits gathered into one
// broadcast, and PMIx_Spawn (a spawned job names its parent, its output
// reaches the spawning job's CLI, the spawning job ends after it and fails
// when it fails, the spawner is answered once the job runs).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "daemon/control_plane/job_table.h"

using namespace grove;
using namespace grove::job_table;

namespace {

constexpr Requester kRun = 7;
constexpr Requester kSpawner = 40;

struct Fixture {
  explicit Fixture(std::uint64_t window = 100) : table(JobTableConfig{"grove.9", window}) {}

  // Feeds an input's outbox in: each effect is kept, in order.
  Outbox take(Outbox out) {
    effects.insert(effects.end(), out.begin(), out.end());
    return out;
  }
  template <class T>
  std::vector<T> all() const {
    std::vector<T> found;
    for (const Effect& effect : effects) {
      if (const auto* typed = std::get_if<T>(&effect)) found.push_back(*typed);
    }
    return found;
  }
  std::vector<Broadcast> broadcasts(std::uint16_t tag) const {
    std::vector<Broadcast> found;
    for (const Broadcast& broadcast : all<Broadcast>()) {
      if (broadcast.tag == tag) found.push_back(broadcast);
    }
    return found;
  }
  std::vector<JobSpec> launches() const {
    std::vector<JobSpec> specs;
    for (const Broadcast& launch : broadcasts(job_tags::launch)) {
      auto spec = wire_decode<JobSpec>(launch.payload);
      REQUIRE(spec);
      specs.push_back(*spec);
    }
    return specs;
  }
  std::size_t kills_of(std::uint32_t job) const {
    std::size_t kills = 0;
    for (const Broadcast& kill : broadcasts(job_tags::kill)) {
      auto ref = wire_decode<JobRef>(kill.payload);
      kills += ref && ref->job == job ? 1 : 0;
    }
    return kills;
  }
  std::vector<nlohmann::json> cli_events(bool final) const {
    std::vector<nlohmann::json> events;
    for (const CliEvent& event : all<CliEvent>()) {
      if (event.final == final && event.requester == kRun) events.push_back(event.event);
    }
    return events;
  }
  Outbox submit(std::uint32_t np, std::vector<std::string> env = {}, std::uint32_t timeout_s = 0) {
    JobRequest request = request_of(np, std::move(env));
    request.timeout_s = timeout_s;
    return take(table.submit(request, kRun, places, 1000));
  }
  static JobRequest request_of(std::uint32_t np, std::vector<std::string> env = {}) {
    JobRequest request;
    request.apps.push_back(JobApp{{"prog"}, {}, "/work", np});
    request.env = std::move(env);
    return request;
  }
  Outbox exit(std::uint32_t job, std::uint32_t rank, ExitKind kind = ExitKind::exited,
              int status = 0, std::string message = "") {
    return take(table.on_exit(RankExit{job, rank, kind, status, std::move(message), {}}, 1010));
  }

  JobTable table;
  JobPlaces places{{{0, 2, "n0"}, {1, 2, "n1"}}, "n0"};
  std::vector<Effect> effects;
};

}  // namespace

TEST_CASE("a job is placed in the membership epoch its driver names", "[jobs]") {
  Fixture f;
  f.submit(2);
  f.table.set_epoch(5);
  f.submit(2);
  const std::vector<JobSpec> launched = f.launches();
  REQUIRE(launched.size() == 2);
  CHECK(launched[0].placed_epoch == UINT64_MAX);  // not said: only deaths count
  // A daemon that comes back or joins after epoch 5 hosts none of job 2's ranks.
  CHECK(launched[1].placed_epoch == 5);
}

TEST_CASE("a job launches on the living daemons, and ends once every rank has exited", "[jobs]") {
  Fixture f;
  f.submit(4);
  const std::vector<JobSpec> launched = f.launches();
  REQUIRE(launched.size() == 1);
  CHECK(launched[0].nspace == "grove.9.1");
  CHECK(launched[0].hostnames == std::vector<std::string>{"n0", "n1"});
  REQUIRE(f.cli_events(false).size() == 1);
  CHECK(f.cli_events(false)[0]["event"] == "started");
  CHECK(f.table.next_nspace() == "grove.9.2");

  for (std::uint32_t rank = 0; rank < 3; ++rank)
    f.exit(1, rank);
  CHECK(f.cli_events(true).empty());
  CHECK(f.broadcasts(job_tags::cleanup).empty());
  f.exit(1, 3);
  REQUIRE(f.cli_events(true).size() == 1);
  CHECK(f.cli_events(true)[0]["status"] == 0);
  CHECK(f.broadcasts(job_tags::cleanup).size() == 1);
  REQUIRE(f.all<JobEnded>().size() == 1);
  CHECK(f.all<JobEnded>()[0].nspace == "grove.9.1");
  CHECK(f.all<RankExited>().size() == 4);
  CHECK(f.table.active() == 0);
  const nlohmann::json jobs = f.table.jobs_json();
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["state"] == "done");
  CHECK(jobs[0]["ended"] == 1010);
}

TEST_CASE("a job that cannot be placed is refused with its reason, and nothing launches",
          "[jobs]") {
  Fixture f;
  JobRequest request = Fixture::request_of(9);
  request.oversubscribe = false;
  f.take(f.table.submit(request, kRun, f.places, 0));
  request = Fixture::request_of(2);
  request.stdin_rank = 5;
  f.take(f.table.submit(request, kRun, f.places, 0));
  request = Fixture::request_of(2);
  request.hosts = {HostChoice{"elsewhere", 0}};
  f.take(f.table.submit(request, kRun, f.places, 0));
  const std::vector<nlohmann::json> refusals = f.cli_events(true);
  REQUIRE(refusals.size() == 3);
  CHECK_THAT(refusals[0]["error"].get<std::string>(), Catch::Contains("--nooversubscribe"));
  CHECK_THAT(refusals[1]["error"].get<std::string>(), Catch::Contains("--stdin 5"));
  CHECK_THAT(refusals[2]["error"].get<std::string>(), Catch::Contains("elsewhere"));
  CHECK(f.launches().empty());
  CHECK(f.table.active() == 0);
}

TEST_CASE("a failing rank fails its job once: the other ranks are killed, PMIx hears of it",
          "[jobs]") {
  Fixture f;
  f.submit(3);
  f.exit(1, 1, ExitKind::exited, 3);
  CHECK(f.kills_of(1) == 1);
  REQUIRE(f.all<RankFailed>().size() == 1);
  CHECK(f.all<RankFailed>()[0].how == RankFailure::exited);
  // The others die of the kill: no news, no second kill.
  f.exit(1, 0, ExitKind::signaled, 15, "Terminated");
  f.exit(1, 2, ExitKind::signaled, 15, "Terminated");
  CHECK(f.all<RankFailed>().size() == 1);
  CHECK(f.kills_of(1) == 1);
  REQUIRE(f.cli_events(true).size() == 1);
  CHECK(f.cli_events(true)[0]["status"] == 3);
  CHECK(f.cli_events(true)[0]["message"] == "rank 1 exited with status 3");
  CHECK(f.table.jobs_json()[0]["state"] == "failed");
}

TEST_CASE("a job's timeout kills it with status 124, and its timer goes with it", "[jobs]") {
  Fixture f;
  f.submit(2, {}, 5);
  REQUIRE(f.all<ArmTimer>().size() == 1);
  CHECK(f.all<ArmTimer>()[0].kind == TimerKind::timeout);
  CHECK(f.all<ArmTimer>()[0].ms == 5000);
  f.take(f.table.timer_fired(1, TimerKind::timeout));
  CHECK(f.kills_of(1) == 1);
  f.exit(1, 0, ExitKind::signaled, 15, "Terminated");
  f.exit(1, 1, ExitKind::signaled, 15, "Terminated");
  REQUIRE(f.cli_events(true).size() == 1);
  CHECK(f.cli_events(true)[0]["status"] == 124);
  CHECK(f.all<RankFailed>().empty());   // killed by grove, not failed by its ranks
  CHECK(f.all<CancelTimer>().empty());  // it fired: nothing left to cancel

  // A job that ends before its timeout cancels it (and the gathering its
  // last clean exit started: nobody needs to hear of that exit).
  Fixture g;
  g.submit(1, {}, 5);
  g.exit(1, 0);
  const std::vector<CancelTimer> cancelled = g.all<CancelTimer>();
  REQUIRE(cancelled.size() == 2);
  CHECK(cancelled[0].kind == TimerKind::timeout);
  CHECK(cancelled[1].kind == TimerKind::gone_gathering);
  CHECK(g.broadcasts(job_tags::ranks_gone).empty());
}

TEST_CASE("a lost daemon ends the jobs it hosted ranks of, naming it, and no other", "[jobs]") {
  Fixture f;
  JobRequest on_one = Fixture::request_of(2);
  on_one.hosts = {HostChoice{"n0", 0}};
  f.take(f.table.submit(on_one, kRun, f.places, 0));  // job 1: daemon 0 only
  f.submit(4);                                        // job 2: both
  f.take(f.table.on_daemon_lost(1, "daemon 1 (n1)", 1020));
  CHECK(f.kills_of(1) == 0);
  CHECK(f.kills_of(2) == 1);
  // Its ranks on daemon 1 died with it; those on daemon 0 end of the kill.
  f.exit(2, 0, ExitKind::signaled, 15, "Terminated");
  f.exit(2, 1, ExitKind::signaled, 15, "Terminated");
  REQUIRE(f.cli_events(true).size() == 1);
  CHECK(f.cli_events(true)[0]["job"] == 2);
  CHECK(f.cli_events(true)[0]["message"] ==
        "daemon 1 (n1), which hosted ranks of this job, was lost");
  CHECK(f.table.active() == 1);
}

TEST_CASE("output past the CLI's window holds the daemons' acknowledgements until it drains",
          "[jobs][output]") {
  Fixture f(100);
  f.submit(2);
  f.take(f.table.on_output(JobOutput{1, 0, OutputStream::out, "hello\n"}, 1));
  REQUIRE(f.all<CheckCliQueue>().size() == 1);
  CHECK(f.all<CheckCliQueue>()[0].requester == kRun);
  CHECK(f.cli_events(false).back()["text"] == "hello\n");
  // The CLI keeps up: acknowledged at once.
  f.take(f.table.cli_queue(1, 10));
  REQUIRE(f.all<AckOutput>().size() == 1);
  CHECK(f.all<AckOutput>()[0].daemon == 1);
  CHECK(f.all<AckOutput>()[0].ack.bytes == 6);

  // It falls behind: the acknowledgements wait, and the queue is polled.
  f.take(f.table.on_output(JobOutput{1, 0, OutputStream::out, "abc"}, 1));
  f.take(f.table.on_output(JobOutput{1, 1, OutputStream::err, "de"}, 0));
  f.take(f.table.cli_queue(1, 500));
  f.take(f.table.cli_queue(1, 600));
  CHECK(f.all<AckOutput>().size() == 1);
  REQUIRE(f.all<ArmTimer>().size() == 1);  // one poll, not one per output
  CHECK(f.all<ArmTimer>()[0].kind == TimerKind::ack_poll);
  f.take(f.table.timer_fired(1, TimerKind::ack_poll));
  CHECK(f.all<CheckCliQueue>().size() == 4);
  f.take(f.table.cli_queue(1, 300));  // still behind: polled again
  CHECK(f.all<ArmTimer>().size() == 2);
  f.take(f.table.cli_queue(1, 50));  // drained: every daemon acknowledged
  const std::vector<AckOutput> acks = f.all<AckOutput>();
  REQUIRE(acks.size() == 3);
  CHECK(acks[1].daemon == 0);
  CHECK(acks[1].ack.bytes == 2);
  CHECK(acks[2].daemon == 1);
  CHECK(acks[2].ack.bytes == 3);
  REQUIRE(f.all<CancelTimer>().size() == 1);
  // The CLI is gone: nothing waits for it.
  f.take(f.table.on_output(JobOutput{1, 0, OutputStream::out, "x"}, 1));
  f.take(f.table.cli_queue(1, std::nullopt));
  CHECK(f.all<AckOutput>().size() == 4);
  // Output of a job that is no more is acknowledged at once.
  f.take(f.table.on_output(JobOutput{9, 0, OutputStream::out, "late"}, 1));
  CHECK(f.all<AckOutput>().size() == 5);
}

TEST_CASE("grove run's input is answered once every daemon with a reading rank has it",
          "[jobs][stdin]") {
  Fixture f;
  JobRequest request = Fixture::request_of(4);
  request.stdin_rank = JobSpec::kStdinAll;
  f.take(f.table.submit(request, kRun, f.places, 0));
  f.take(f.table.forward_stdin(1, "line\n", false, 21));
  const std::vector<SendStdin> sent = f.all<SendStdin>();
  REQUIRE(sent.size() == 2);
  CHECK(sent[0].daemon == 0);
  CHECK(sent[1].daemon == 1);
  CHECK(sent[0].input.data == "line\n");
  f.take(f.table.on_stdin_ack(0, StdinAck{1, sent[0].input.seq, false}));
  CHECK(f.all<AnswerStdin>().empty());
  f.take(f.table.on_stdin_ack(0, StdinAck{1, sent[0].input.seq, true}));  // a repeat: ignored
  f.take(f.table.on_stdin_ack(1, StdinAck{1, sent[1].input.seq, true}));
  REQUIRE(f.all<AnswerStdin>().size() == 1);
  CHECK(f.all<AnswerStdin>()[0].requester == 21);
  CHECK(f.all<AnswerStdin>()[0].open);

  // A daemon lost while input waits for it answers for it (closed).
  f.take(f.table.forward_stdin(1, "more", false, 22));
  f.take(f.table.on_stdin_ack(0, StdinAck{1, f.all<SendStdin>().back().input.seq, false}));
  f.take(f.table.on_daemon_lost(1, "daemon 1 (n1)", 0));
  REQUIRE(f.all<AnswerStdin>().size() == 2);
  CHECK(f.all<AnswerStdin>()[1].requester == 22);
  // A job that is ending reads nothing more.
  f.take(f.table.forward_stdin(1, "late", true, 23));
  REQUIRE(f.all<AnswerStdin>().size() == 3);
  CHECK_FALSE(f.all<AnswerStdin>()[2].open);
}

TEST_CASE("clean exits while others run are gathered into one broadcast", "[jobs]") {
  Fixture f;
  f.submit(4);
  f.exit(1, 0);
  f.exit(1, 2);
  REQUIRE(f.all<ArmTimer>().size() == 1);
  CHECK(f.all<ArmTimer>()[0].kind == TimerKind::gone_gathering);
  CHECK(f.broadcasts(job_tags::ranks_gone).empty());
  f.take(f.table.timer_fired(1, TimerKind::gone_gathering));
  const std::vector<Broadcast> gone = f.broadcasts(job_tags::ranks_gone);
  REQUIRE(gone.size() == 1);
  auto decoded = wire_decode<RanksGone>(gone[0].payload);
  REQUIRE(decoded);
  REQUIRE(decoded->ranks.size() == 2);
  CHECK(decoded->ranks[0].rank == 0);
  CHECK(decoded->ranks[1].rank == 2);
}

TEST_CASE(
    "a spawned job names its parent, sends its output to the parent's CLI, and the parent "
    "ends after it with its failure",
    "[jobs][spawn]") {
  Fixture f;
  f.submit(2, {"A=1"});
  f.take(
      f.table.spawn(Fixture::request_of(3, {"B=2"}), "grove.9.1", 1, kSpawner, f.places.living, 0));
  const std::vector<JobSpec> launched = f.launches();
  REQUIRE(launched.size() == 2);
  CHECK(launched[1].nspace == "grove.9.2");
  CHECK(launched[1].parent_nspace == "grove.9.1");
  CHECK(launched[1].parent_rank == 1);
  CHECK(launched[1].env == std::vector<std::string>{"A=1", "B=2"});  // the parent's first
  REQUIRE(launched[1].apps.size() == 1);
  CHECK(launched[1].apps[0].cwd == "/work");
  CHECK(launched[0].parent_nspace.empty());
  CHECK(f.cli_events(false).size() == 1);  // the CLI hears of spawned jobs by their output

  f.take(f.table.on_output(JobOutput{2, 0, OutputStream::out, "from the child\n"}, 1));
  CHECK(f.cli_events(false).back()["text"] == "from the child\n");
  CHECK(f.cli_events(false).back()["job"] == 2);

  // The parent's ranks are done; it waits for its child.
  f.exit(1, 0);
  f.exit(1, 1);
  CHECK(f.cli_events(true).empty());
  CHECK(f.table.active() == 2);

  // A child rank fails: reported, the child ends, and the parent with it.
  f.exit(2, 1, ExitKind::exited, 3);
  const std::vector<RankFailed> failures = f.all<RankFailed>();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].nspace == "grove.9.2");
  CHECK(failures[0].rank == 1);
  CHECK(failures[0].how == RankFailure::exited);
  CHECK(failures[0].status == 3);
  CHECK(failures[0].spawned_by == std::make_pair(std::string("grove.9.1"), std::uint32_t{1}));
  CHECK(f.kills_of(2) == 1);
  f.exit(2, 0, ExitKind::signaled, 15, "Terminated");
  f.exit(2, 2, ExitKind::signaled, 15, "Terminated");
  CHECK(f.all<RankFailed>().size() == 1);  // killed because the job was ending: no news
  REQUIRE(f.cli_events(true).size() == 1);
  CHECK(f.table.active() == 0);
  CHECK(f.cli_events(true)[0]["status"] == 3);
  CHECK_THAT(f.cli_events(true)[0]["message"].get<std::string>(),
             Catch::StartsWith("spawned job 2 failed"));
}

TEST_CASE("a spawn from a job that is not running, or is ending, is refused", "[jobs][spawn]") {
  Fixture f;
  f.take(f.table.spawn(Fixture::request_of(1), "grove.9.7", 0, kSpawner, f.places.living, 0));
  f.submit(1);
  f.take(f.table.on_abort(JobAbort{1, 0, 5, "bye"}));
  REQUIRE(f.all<RankFailed>().size() == 1);
  CHECK(f.all<RankFailed>()[0].how == RankFailure::aborted);
  CHECK(f.all<RankFailed>()[0].status == 5);
  f.take(f.table.spawn(Fixture::request_of(1), "grove.9.1", 0, kSpawner + 1, f.places.living, 0));
  const std::vector<AnswerSpawn> answers = f.all<AnswerSpawn>();
  REQUIRE(answers.size() == 2);
  CHECK_FALSE(answers[0].launched);
  CHECK(answers[0].nspace.empty());
  CHECK_THAT(answers[0].launched.error().message, Catch::Contains("not running"));
  CHECK_FALSE(answers[1].launched);
  CHECK_THAT(answers[1].launched.error().message, Catch::Contains("ending"));
  CHECK(f.launches().size() == 1);
}

TEST_CASE("a rank counts as running from its daemon's started report to its exit, in any order",
          "[jobs]") {
  Fixture f;
  f.submit(4);
  auto running = [&] {
    const nlohmann::json jobs = f.table.jobs_json();
    REQUIRE(jobs.size() == 1);
    return jobs[0]["ranks_running"].get<int>();
  };
  CHECK(running() == 0);  // launched, none exec'd yet
  f.take(f.table.on_started(RanksStarted{1, {0, 1}}));
  CHECK(running() == 2);
  // Rank 3's exit overtakes its daemon's report; rank 9 is no rank; job 5 is none.
  f.exit(1, 3);
  f.take(f.table.on_started(RanksStarted{1, {2, 3, 9}}));
  f.take(f.table.on_started(RanksStarted{5, {0}}));
  CHECK(running() == 3);
  f.exit(1, 0);
  CHECK(running() == 2);
}

TEST_CASE("PMIx_Spawn is answered once every rank of the new job has started", "[jobs][spawn]") {
  // Answered at once, a spawner's PMIx_Connect to the new job could reach
  // its PMIx server before the job was registered there: libpmix 4.2 then
  // released half of the connect (1 run in 300 of openpmix's `dynamic`).
  Fixture f;
  f.submit(1);
  f.take(f.table.spawn(Fixture::request_of(3), "grove.9.1", 0, kSpawner, f.places.living, 0));
  CHECK(f.all<AnswerSpawn>().empty());  // launched, not yet running
  f.take(f.table.on_started(RanksStarted{2, {0, 2}}));
  CHECK(f.all<AnswerSpawn>().empty());
  f.take(f.table.on_started(RanksStarted{2, {1}}));
  REQUIRE(f.all<AnswerSpawn>().size() == 1);
  CHECK(f.all<AnswerSpawn>()[0].launched);
  CHECK(f.all<AnswerSpawn>()[0].nspace == "grove.9.2");
  CHECK(f.all<AnswerSpawn>()[0].requester == kSpawner);
  f.take(f.table.on_started(RanksStarted{2, {1}}));  // a repeat answers nothing more
  CHECK(f.all<AnswerSpawn>().size() == 1);

  // A job that fails before all its ranks run: the spawner hears why.
  f.take(f.table.spawn(Fixture::request_of(2), "grove.9.1", 0, kSpawner + 1, f.places.living, 0));
  f.take(f.table.on_started(RanksStarted{3, {0}}));
  f.exit(3, 1, ExitKind::failed_start, 127, "cannot execute 'prog'");
  REQUIRE(f.all<AnswerSpawn>().size() == 2);
  CHECK_FALSE(f.all<AnswerSpawn>()[1].launched);
  CHECK_THAT(f.all<AnswerSpawn>()[1].launched.error().message,
             Catch::Contains("the spawned job ended before all its ranks started"));
}

TEST_CASE("the jobs with ranks on given daemons are named for grove shrink", "[jobs]") {
  Fixture f;
  JobRequest on_one = Fixture::request_of(2);
  on_one.hosts = {HostChoice{"n0", 0}};
  f.take(f.table.submit(on_one, kRun, f.places, 0));  // job 1: daemon 0 only
  f.submit(4);                                        // job 2: both
  CHECK(f.table.jobs_on({1}) == std::map<std::uint32_t, std::string>{{2, "job 2 (grove.9.2)"}});
  CHECK(f.table.jobs_on({0}).size() == 2);
  CHECK(f.table.jobs_on({5}).empty());
  CHECK(f.table.runs(1));
  CHECK_FALSE(f.table.runs(3));
}
