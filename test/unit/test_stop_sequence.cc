// The controller's stop sequence against scripted inputs.
#include <catch2/catch.hpp>

#include "daemon/control_plane/stop_sequence.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::count_of;
using grove::test::effects_of;

TEST_CASE("a stop tells every daemon, closes, reaps and completes", "[stop]") {
  StopSequence stop(5000);
  auto out = stop.begin("grove stop", /*dvm_ready=*/true);
  REQUIRE(out.size() == 3);
  CHECK(std::get<stop::EndWork>(out[0]).reason == "grove stop");
  CHECK(std::get<stop::ArmTimer>(out[1]).timer == StopTimer::acknowledge);
  CHECK(std::get<stop::ArmTimer>(out[1]).delay_ms == 5000);
  CHECK(std::holds_alternative<stop::BroadcastShutdown>(out[2]));
  CHECK(stop.stage() == StopSequence::Stage::notifying);
  // A second request joins the first.
  CHECK(stop.begin("interrupted", true).empty());
  CHECK(stop.reason() == "grove stop");

  // The broadcast landed: close on the next loop pass, not inside its callback.
  out = stop.acknowledged();
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::close);
  CHECK(effects_of<stop::ArmTimer>(out)[0].delay_ms == 0);
  CHECK(count_of<stop::CloseConnections>(out) == 0);
  CHECK(stop.acknowledged().empty());

  out = stop.timer_fired(StopTimer::close);
  CHECK(count_of<stop::CloseConnections>(out) == 1);
  CHECK(count_of<stop::Reap>(out) == 1);
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::kill);

  // Still running: reap again soon; then everything ended.
  out = stop.reaped(/*still_running=*/true);
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::poll);
  CHECK(count_of<stop::Reap>(stop.timer_fired(StopTimer::poll)) == 1);
  out = stop.reaped(false);
  REQUIRE(out.size() == 1);
  CHECK(std::get<stop::Complete>(out[0]).reason == "grove stop");
  CHECK(stop.stage() == StopSequence::Stage::done);
  // Late timers change nothing once done.
  CHECK(stop.timer_fired(StopTimer::kill).empty());
  CHECK(stop.timer_fired(StopTimer::poll).empty());
}

TEST_CASE("an unacknowledged shutdown moves on at its deadline, saying so", "[stop]") {
  StopSequence stop(100);
  stop.begin("grove stop", true);
  auto out = stop.timer_fired(StopTimer::acknowledge);
  REQUIRE(count_of<stop::Notice>(out) == 1);
  CHECK(std::get<stop::Notice>(out[0]).text.find("daemon_stop_timeout_ms") != std::string::npos);
  CHECK(stop.stage() == StopSequence::Stage::reaping);
  // The broadcast landing late is no second step.
  CHECK(stop.acknowledged().empty());
}

TEST_CASE("what does not exit in time is killed", "[stop]") {
  StopSequence stop(100);
  stop.begin("grove stop", true);
  stop.acknowledged();
  stop.timer_fired(StopTimer::close);
  stop.reaped(true);
  auto out = stop.timer_fired(StopTimer::kill);
  CHECK(count_of<stop::KillStragglers>(out) == 1);
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::poll);
  CHECK(stop.reaped(false).size() == 1);
}

TEST_CASE("a stop before the DVM is ready skips the broadcast", "[stop]") {
  StopSequence stop(100);
  auto out = stop.begin("interrupted", /*dvm_ready=*/false);
  CHECK(count_of<stop::BroadcastShutdown>(out) == 0);
  CHECK(count_of<stop::EndWork>(out) == 1);
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::close);
  CHECK(stop.stage() == StopSequence::Stage::reaping);
}

TEST_CASE("an exit during the stop moves it on", "[stop]") {
  StopSequence stop(100);
  CHECK(stop.process_exited().empty());  // not stopping: not the stop's business
  stop.begin("grove stop", true);
  // While notifying, as if the broadcast landed.
  auto out = stop.process_exited();
  REQUIRE(effects_of<stop::ArmTimer>(out).size() == 1);
  CHECK(effects_of<stop::ArmTimer>(out)[0].timer == StopTimer::close);
  // While the close is pending, an exit closes at once (not inside a
  // transport callback: SIGCHLD comes from the loop).
  out = stop.process_exited();
  CHECK(count_of<stop::CloseConnections>(out) == 1);
  // The pending close timer then only reaps; so does a later exit.
  out = stop.timer_fired(StopTimer::close);
  CHECK(count_of<stop::CloseConnections>(out) == 0);
  CHECK(count_of<stop::Reap>(out) == 1);
  CHECK(count_of<stop::Reap>(stop.process_exited()) == 1);
}
