// How a DVM's start ends, against scripted inputs.
#include <catch2/catch.hpp>

#include "daemon/control_plane/launch_supervisor.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::effects_of;

TEST_CASE("the start arms its report deadline, and fails naming who never reported", "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  auto out = supervisor.begin();
  REQUIRE(effects_of<start::ArmReportDeadline>(out).size() == 1);
  CHECK(effects_of<start::ArmReportDeadline>(out)[0].delay_ms == 30000);
  out = supervisor.report_deadline_passed("daemon 2 (node2)");
  auto failed = effects_of<start::FailStart>(out);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].message ==
        "daemons never reported within daemon_report_timeout_ms (30000 ms): daemon 2 (node2)");
  CHECK(supervisor.phase() == LaunchSupervisor::Phase::failed);
  // Failed once: nothing fails it again.
  CHECK(supervisor.report_deadline_passed("daemon 2").empty());
  CHECK(supervisor.launch_failed("daemon 3", "no route").empty());
}

TEST_CASE("a failure during the start is reported after the callback, the first one only",
          "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  auto out = supervisor.launch_failed("daemon 3 (node3)", "ssh: connection refused");
  REQUIRE(effects_of<start::ArmFailure>(out).size() == 1);
  CHECK(effects_of<start::ArmFailure>(out)[0].delay_ms == 0);
  CHECK(effects_of<start::FailStart>(out).empty());
  // A second failure before the timer fires is not the one reported.
  CHECK(supervisor.launch_failed("daemon 4", "ssh: no route").empty());
  auto failed = effects_of<start::FailStart>(supervisor.failure_timer_fired());
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].message == "cannot start daemon 3 (node3): ssh: connection refused");
}

TEST_CASE("under srun a loss waits for the step's own exit, which replaces it", "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  auto out = supervisor.daemon_lost("daemon 5 failed during startup: its connection closed",
                                    /*step_running=*/true);
  REQUIRE(effects_of<start::ArmFailure>(out).size() == 1);
  CHECK(effects_of<start::ArmFailure>(out)[0].delay_ms == 15000);
  // srun's exit names the node that failed first: a firm failure, reported.
  out = supervisor.step_ended("srun exited with status 1", "\nsrun: error: node7: task 6: Exited",
                              "daemon 6 (node7)");
  REQUIRE(effects_of<start::ArmFailure>(out).size() == 1);
  CHECK(effects_of<start::ArmFailure>(out)[0].delay_ms == 0);
  auto failed = effects_of<start::FailStart>(supervisor.failure_timer_fired());
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].message ==
        "srun exited with status 1 before these daemons were up: daemon 6 (node7); its last "
        "lines:\nsrun: error: node7: task 6: Exited");
}

TEST_CASE("a provisional failure stands if nothing firmer comes", "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  supervisor.daemon_lost("daemon 5 failed during startup: x", true);
  // Another provisional one does not replace it.
  CHECK(supervisor.daemon_lost("daemon 6 failed during startup: y", true).empty());
  auto failed = effects_of<start::FailStart>(supervisor.failure_timer_fired());
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].message == "daemon 5 failed during startup: x");
}

TEST_CASE("once ready, a launch failure is logged and the step's end stops the DVM", "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  supervisor.ready();
  CHECK(supervisor.is_ready());
  auto out = supervisor.launch_failed("daemon 3", "late");
  CHECK(effects_of<start::ArmFailure>(out).empty());
  REQUIRE(effects_of<start::Notice>(out).size() == 1);
  CHECK(effects_of<start::Notice>(out)[0].level == start::Notice::Level::error);
  CHECK(supervisor.daemon_lost("gone", false).empty());  // the roster's to decide now
  out = supervisor.step_ended("srun was cancelled", "", "");
  REQUIRE(effects_of<start::StopDvm>(out).size() == 1);
  CHECK(effects_of<start::StopDvm>(out)[0].reason == "the daemons' Slurm step ended");
  CHECK(supervisor.report_deadline_passed("").empty());
}

TEST_CASE("while the DVM stops, launches ended by the stop are no failures", "[launch]") {
  LaunchSupervisor supervisor(30000, 15000);
  supervisor.stopping();
  CHECK_FALSE(supervisor.is_ready());
  auto out = supervisor.launch_failed("daemon 3", "killed by signal 15");
  CHECK(effects_of<start::ArmFailure>(out).empty());
  REQUIRE(effects_of<start::Notice>(out).size() == 1);
  CHECK(effects_of<start::Notice>(out)[0].level == start::Notice::Level::verbose);
  CHECK(effects_of<start::StopDvm>(supervisor.step_ended("srun ended", "", "")).empty());
}
