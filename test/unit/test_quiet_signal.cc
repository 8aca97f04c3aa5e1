// Signals wait until no rank is inside its PMIx handshake: the others are
// stopped meanwhile, the unanswered run on until answered, and the signal
// goes once every rank is stopped and nothing is unanswered, or at the
// deadline.
#include <catch2/catch.hpp>

#include <event2/event.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <set>
#include <string>

#include "jobs/host/quiet_signal.h"
#include "support/process_probe.h"

namespace grove {
namespace {

// A process of its own group that waits to be signalled.
pid_t start_sleeper() {
  // Signals wait until the child has dropped the test runner's handlers: a
  // signal sent before the child first runs must kill it, not run Catch's
  // fatal-signal report in it.
  sigset_t all, before;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &before);
  pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGINT, SIG_DFL);
    sigprocmask(SIG_SETMASK, &before, nullptr);
    for (;;)
      pause();
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  setpgid(child, child);  // either side may win the race; both ask the same
  return child;
}

// Runs the loop until the signaller has nothing waiting (bounded).
void run_until_done(event_base* base, const QuietSignaller& signaller) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (signaller.waiting() > 0 && std::chrono::steady_clock::now() < give_up)
    event_base_loop(base, EVLOOP_ONCE);
}

int wait_for_signal(pid_t child) {
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  return WTERMSIG(status);
}

// `stop` (STOP or TSTP) through the signaller; returns once the child has
// stopped, as its parent sees it.
void stop_through(QuietSignaller& signaller, event_base* base, pid_t child, int stop) {
  signaller.signal([child] { return std::vector<pid_t>{child}; }, stop);
  run_until_done(base, signaller);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  REQUIRE(WIFSTOPPED(status));
}

}  // namespace

TEST_CASE("a signal goes to stopped ranks once no handshake is pending", "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  int asked = 0;
  bool last_look_stopped = false;
  QuietSignaller signaller(
      base.get(),
      [&](const std::vector<pid_t>& roots) {
        REQUIRE(roots == std::vector<pid_t>{child});
        ++asked;
        last_look_stopped = process_stopped_or_gone(child);
        // Unanswered for the first three looks: the rank runs on meanwhile.
        return asked <= 3 ? std::set<pid_t>{child} : std::set<pid_t>{};
      },
      TimeNs{10'000'000'000});
  signaller.signal([&] { return std::vector<pid_t>{child}; }, SIGTERM);
  run_until_done(base.get(), signaller);
  CHECK(signaller.waiting() == 0);
  CHECK(asked > 3);
  // The signal went only when the answered rank was stopped again.
  CHECK(last_look_stopped);
  CHECK(wait_for_signal(child) == SIGTERM);
}

TEST_CASE("a rank whose handshake is unanswered runs on while the others wait stopped",
          "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t connecting = start_sleeper();
  pid_t idle = start_sleeper();
  int asked = 0;
  bool connecting_ran = false, idle_waited_stopped = true;
  QuietSignaller signaller(
      base.get(),
      [&](const std::vector<pid_t>&) {
        ++asked;
        if (asked > 1 && asked <= 20) {
          // SIGCONT went at the previous look: the connecting rank runs.
          connecting_ran = connecting_ran || !process_stopped_or_gone(connecting);
          idle_waited_stopped = idle_waited_stopped && process_stopped_or_gone(idle);
        }
        return asked <= 20 ? std::set<pid_t>{connecting} : std::set<pid_t>{};
      },
      TimeNs{10'000'000'000});
  signaller.signal([&] { return std::vector<pid_t>{connecting, idle}; }, SIGKILL);
  run_until_done(base.get(), signaller);
  CHECK(signaller.waiting() == 0);
  CHECK(connecting_ran);
  CHECK(idle_waited_stopped);
  CHECK(wait_for_signal(connecting) == SIGKILL);
  CHECK(wait_for_signal(idle) == SIGKILL);
}

TEST_CASE("a signal goes at the deadline even if a handshake never ends", "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  QuietSignaller signaller(
      base.get(), [&](const std::vector<pid_t>&) { return std::set<pid_t>{child}; },
      TimeNs{50'000'000});
  signaller.signal([&] { return std::vector<pid_t>{child}; }, SIGKILL);
  run_until_done(base.get(), signaller);
  CHECK(signaller.waiting() == 0);
  CHECK(wait_for_signal(child) == SIGKILL);
}

TEST_CASE("without a way to know, a signal goes at once", "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  QuietSignaller signaller(base.get(), nullptr, TimeNs{10'000'000'000});
  signaller.signal([&] { return std::vector<pid_t>{child}; }, SIGKILL);
  CHECK(signaller.waiting() == 0);
  CHECK(wait_for_signal(child) == SIGKILL);
}

TEST_CASE("a stopped or exited process reads as stopped", "[quiet_signal]") {
  pid_t child = start_sleeper();
  CHECK_FALSE(process_stopped_or_gone(child));
  REQUIRE(kill(child, SIGSTOP) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  CHECK(process_stopped_or_gone(child));
  REQUIRE(kill(child, SIGKILL) == 0);
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(process_stopped_or_gone(child));  // reaped: gone
}

TEST_CASE("a stop signal leaves the ranks stopped; another one lets them run on",
          "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  QuietSignaller signaller(
      base.get(), [](const std::vector<pid_t>&) { return std::set<pid_t>{}; },
      TimeNs{10'000'000'000});
  signaller.signal([&] { return std::vector<pid_t>{child}; }, SIGSTOP);
  run_until_done(base.get(), signaller);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  CHECK(WIFSTOPPED(status));
  // SIGCONT through the same path: it runs again (and SIGTERM then ends it).
  signaller.signal([&] { return std::vector<pid_t>{child}; }, SIGCONT);
  run_until_done(base.get(), signaller);
  REQUIRE(waitpid(child, &status, WCONTINUED) == child);
  CHECK(WIFCONTINUED(status));
  kill(child, SIGTERM);
  CHECK(wait_for_signal(child) == SIGTERM);
}

TEST_CASE("ranks a stop signal left stopped stay stopped through other signals", "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  QuietSignaller signaller(
      base.get(), [](const std::vector<pid_t>&) { return std::set<pid_t>{}; },
      TimeNs{10'000'000'000});
  auto groups = [&] { return std::vector<pid_t>{child}; };
  stop_through(signaller, base.get(), child, SIGSTOP);
  // SIGUSR1 (deadly to the sleeper) waits in the stopped process, as it
  // would under kill(1): no SIGCONT follows it.
  signaller.signal(groups, SIGUSR1);
  run_until_done(base.get(), signaller);
  CHECK(signaller.waiting() == 0);
  CHECK(test::state_of(child) == 'T');
  // SIGCONT ends the stop, and the pending SIGUSR1 then takes effect.
  signaller.signal(groups, SIGCONT);
  run_until_done(base.get(), signaller);
  CHECK(wait_for_signal(child) == SIGUSR1);
}

TEST_CASE("ranks resumed by other means than the signaller are not stopped again by a signal",
          "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  pid_t other = start_sleeper();  // another job's rank, its handshake unanswered
  bool other_connecting = false;
  QuietSignaller signaller(
      base.get(),
      [&](const std::vector<pid_t>& groups) {
        const bool asks_other = std::find(groups.begin(), groups.end(), other) != groups.end();
        return other_connecting && asks_other ? std::set<pid_t>{other} : std::set<pid_t>{};
      },
      TimeNs{10'000'000'000});
  auto groups = [&] { return std::vector<pid_t>{child}; };
  stop_through(signaller, base.get(), child, SIGSTOP);
  // Another job's request waits on a handshake meanwhile: that does not
  // keep this rank's old stop alive.
  other_connecting = true;
  signaller.signal([&] { return std::vector<pid_t>{other}; }, SIGWINCH);
  REQUIRE(signaller.waiting() == 1);
  // Continued on its node, not through grove kill.
  REQUIRE(kill(child, SIGCONT) == 0);
  int status = 0;
  REQUIRE(waitpid(child, &status, WCONTINUED) == child);
  REQUIRE(WIFCONTINUED(status));
  // SIGWINCH is ignored by the sleeper: it runs on, not held stopped.
  signaller.signal(groups, SIGWINCH);
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (signaller.waiting() > 1 && std::chrono::steady_clock::now() < give_up)
    event_base_loop(base.get(), EVLOOP_ONCE);
  CHECK(signaller.waiting() == 1);
  CHECK(
      test::wait_until([child] { return test::state_of(child) == 'S'; }, std::chrono::seconds(30)));
  other_connecting = false;
  run_until_done(base.get(), signaller);
  for (pid_t pid : {child, other}) {
    kill(pid, SIGKILL);  // ends it stopped or not
    CHECK(wait_for_signal(pid) == SIGKILL);
  }
}

TEST_CASE("SIGTERM ends a stopped rank: it is continued, as a shell does for a stopped job",
          "[quiet_signal]") {
  EventBasePtr base(event_base_new());
  pid_t child = start_sleeper();
  QuietSignaller signaller(
      base.get(), [](const std::vector<pid_t>&) { return std::set<pid_t>{}; },
      TimeNs{10'000'000'000});
  auto groups = [&] { return std::vector<pid_t>{child}; };
  stop_through(signaller, base.get(), child, SIGTSTP);
  signaller.signal(groups, SIGTERM);
  run_until_done(base.get(), signaller);
  CHECK(wait_for_signal(child) == SIGTERM);
}
}  // namespace grove
