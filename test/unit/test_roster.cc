// The controller's roster against scripted inputs: reports, silence, lost
// connections, accusations and exits, each decided as the controller does.
#include <catch2/catch.hpp>

#include "daemon/control_plane/roster.h"
#include "support/outbox.h"

using namespace grove;
using grove::test::effects_of;

namespace {

constexpr TimeNs kMs = 1'000'000;

DaemonRoster make_roster(std::uint32_t size, TimeNs heartbeat_ms = 100) {
  DaemonRecord controller;
  controller.hostname = "head";
  controller.endpoint = "127.0.0.1:1";
  return DaemonRoster(RosterConfig{size, heartbeat_ms * kMs, 3}, controller);
}

DaemonReport report_of(Vpid vpid) {
  DaemonReport report;
  report.vpid = vpid;
  report.endpoint = "127.0.0.1:" + std::to_string(1000 + vpid);
  report.hostname = "node" + std::to_string(vpid);
  report.cores = 4;
  report.pid = 500 + vpid;
  return report;
}

// Every daemon reports and the table lands: the DVM runs.
DaemonRoster running_roster(std::uint32_t size, TimeNs now = 0) {
  DaemonRoster roster = make_roster(size);
  for (Vpid vpid = 1; vpid < size; ++vpid)
    roster.on_report(vpid, report_of(vpid), now);
  roster.mark_running(now);
  return roster;
}

}  // namespace

TEST_CASE("the endpoint table goes out once the last daemon reports", "[roster]") {
  DaemonRoster roster = make_roster(3);
  auto first = roster.on_report(1, report_of(1), 0);
  CHECK(effects_of<roster::BroadcastEndpointTable>(first).empty());
  auto welcomes = effects_of<roster::SendControl>(first);
  REQUIRE(welcomes.size() == 1);
  CHECK(welcomes[0].to == 1);
  CHECK(welcomes[0].tag == daemon_tags::welcome);
  CHECK(roster.record(1).state == DaemonStateKind::up);
  CHECK(roster.describe_launching() == "daemon 2");

  // A second report changes nothing, and is no error; a report under
  // another vpid's name is.
  REQUIRE(roster.unexpected_report(1, 1).has_value());
  CHECK(roster.unexpected_report(1, 1)->empty());
  CHECK(*roster.unexpected_report(2, 1) == "daemon 2 reported as vpid 1");
  CHECK(roster.on_report(1, report_of(1), 0).empty());

  auto last = roster.on_report(2, report_of(2), 0);
  auto tables = effects_of<roster::BroadcastEndpointTable>(last);
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].table.daemons.size() == 3);
  CHECK(tables[0].table.daemons[0].hostname == "head");
  CHECK(tables[0].table.daemons[2].endpoint == "127.0.0.1:1002");
  CHECK(roster.living() == 3);
  CHECK(roster.describe_launching().empty());
}

TEST_CASE("a large start reports its progress every 32 daemons", "[roster]") {
  DaemonRoster roster = make_roster(70);
  std::vector<std::size_t> progress;
  for (Vpid vpid = 1; vpid < 70; ++vpid) {
    for (const auto& step :
         effects_of<roster::ReportProgress>(roster.on_report(vpid, report_of(vpid), 0)))
      progress.push_back(step.reported);
  }
  CHECK(progress == std::vector<std::size_t>{32, 64, 70});
}

TEST_CASE("the daemons still launching are named, the first ten only", "[roster]") {
  DaemonRoster roster = make_roster(14);
  roster.planned(3, "node3", std::nullopt, true);
  roster.on_report(1, report_of(1), 0);
  CHECK(roster.describe_launching() ==
        "daemon 2, daemon 3 (node3), daemon 4, daemon 5, daemon 6, daemon 7, daemon 8, daemon 9, "
        "daemon 10, daemon 11, and 2 more");
}

TEST_CASE("a daemon lost before the DVM is ready fails the start", "[roster]") {
  DaemonRoster roster = make_roster(3);
  roster.launched(1, 4242);
  auto out = roster.on_process_ended(1, "exited with status 1");
  auto losses = effects_of<roster::StartupLoss>(out);
  REQUIRE(losses.size() == 1);
  CHECK(losses[0].message == "daemon 1 failed during startup: its process exited with status 1");
  CHECK(effects_of<roster::DeclareDeparture>(out).empty());
  // Reaped: its pid is never signalled again.
  CHECK(roster.unreaped_children().empty());
}

TEST_CASE("silence past the heartbeat limit loses a daemon and evicts it", "[roster]") {
  DaemonRoster roster = running_roster(3);
  // Checks every 100 ms; daemon 2 keeps talking, daemon 1 goes quiet.
  roster::Outbox out;
  for (TimeNs now = 100 * kMs; now <= 300 * kMs; now += 100 * kMs) {
    roster.heard_from(2, now);
    out = roster.check_heartbeats(now);
    CHECK(out.empty());
  }
  roster.heard_from(2, 400 * kMs);
  out = roster.check_heartbeats(400 * kMs);
  auto departures = effects_of<roster::DeclareDeparture>(out);
  REQUIRE(departures.size() == 1);
  CHECK(departures[0].vpid == 1);
  // Started elsewhere (no local pid): told to leave, since it may still run.
  auto sends = effects_of<roster::SendControl>(out);
  REQUIRE(sends.size() == 1);
  CHECK(sends[0].tag == daemon_tags::evicted);
  auto eviction = wire_decode<Eviction>(sends[0].payload);
  REQUIRE(eviction);
  CHECK(eviction->reason == "missed 3 heartbeats");
  auto announced = effects_of<roster::AnnounceLoss>(out);
  REQUIRE(announced.size() == 1);
  CHECK(announced[0].description == "daemon 1 (node1) lost: missed 3 heartbeats");
  CHECK(roster.record(1).state == DaemonStateKind::failed);
  CHECK(roster.record(2).state == DaemonStateKind::up);
  // Judged once: a later check says nothing more of it.
  CHECK(roster.check_heartbeats(500 * kMs).empty());
}

TEST_CASE("the controller's own stall is not held against its daemons", "[roster]") {
  DaemonRoster roster = running_roster(2);
  roster.heard_from(1, 100 * kMs);
  CHECK(roster.check_heartbeats(100 * kMs).empty());
  // The controller was stopped for 5 s: nobody was heard, nobody is lost.
  auto out = roster.check_heartbeats(5100 * kMs);
  CHECK(effects_of<roster::DeclareDeparture>(out).empty());
  auto notices = effects_of<roster::Notice>(out);
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].text.find("stalled for 4.9 s") != std::string::npos);
  // Silence after the stall counts again: last heard at 100 ms plus the
  // 4.9 s credited, so past the 300 ms limit at 5.4 s.
  for (TimeNs now = 5200 * kMs; now <= 5300 * kMs; now += 100 * kMs)
    CHECK(roster.check_heartbeats(now).empty());
  CHECK(effects_of<roster::DeclareDeparture>(roster.check_heartbeats(5400 * kMs)).size() == 1);
}

TEST_CASE("a local daemon declared lost is killed, not evicted", "[roster]") {
  DaemonRoster roster = make_roster(2);
  roster.launched(1, 4242);
  roster.on_report(1, report_of(1), 0);
  roster.mark_running(0);
  auto out = roster.on_link_lost(0, 1);
  auto kills = effects_of<roster::KillProcess>(out);
  REQUIRE(kills.size() == 1);
  CHECK(kills[0].pid == 4242);
  CHECK(effects_of<roster::SendControl>(out).empty());
  CHECK(effects_of<roster::DeclareDeparture>(out).size() == 1);
  // Its exit, reaped later, is no second loss.
  CHECK(roster.on_process_ended(1, "killed by signal 9").empty());
  CHECK(roster.unreaped_children().empty());
}

TEST_CASE("one partition costs the DVM one daemon", "[roster]") {
  DaemonRoster roster = running_roster(4);
  // Daemons 1 and 2 lose their link: the first accusation wins.
  auto first = roster.on_link_lost(1, 2);
  CHECK(effects_of<roster::DeclareDeparture>(first).size() == 1);
  // The accused, now departed, accuses back: not heard.
  CHECK(roster.on_link_lost(2, 1).empty());
  // Nobody accuses the controller, and strangers accuse nobody.
  CHECK(roster.on_link_lost(1, 0).empty());
  CHECK(roster.on_link_lost(9, 1).empty());
  CHECK(roster.on_link_lost(1, 9).empty());
  CHECK(roster.living() == 3);
  CHECK(roster.count(DaemonStateKind::failed) == 1);
}

TEST_CASE("while the DVM stops, exits and closed connections are no losses", "[roster]") {
  DaemonRoster roster = make_roster(3);
  roster.launched(1, 4242);
  roster.launched(2, 4243);
  roster.on_report(1, report_of(1), 0);
  roster.on_report(2, report_of(2), 0);
  roster.mark_running(0);
  roster.mark_stopping();
  CHECK(roster.on_connection_closed(1).empty());
  CHECK(roster.on_link_lost(1, 2).empty());
  CHECK(roster.check_heartbeats(10'000 * kMs).empty());
  CHECK(roster.on_process_ended(1, "exited with status 0").empty());
  CHECK(roster.record(1).state == DaemonStateKind::stopped);
  roster.reaped(2);
  CHECK(roster.record(2).state == DaemonStateKind::stopped);
  CHECK(roster.unreaped_children().empty());
  CHECK(roster.count(DaemonStateKind::failed) == 0);
}

TEST_CASE("without heartbeats, silence decides nothing", "[roster]") {
  DaemonRoster roster = make_roster(2, /*heartbeat_ms=*/0);
  roster.on_report(1, report_of(1), 0);
  roster.mark_running(0);
  CHECK(roster.check_heartbeats(3'600'000 * kMs).empty());
  CHECK(roster.record(1).state == DaemonStateKind::up);
}

TEST_CASE("grove shrink: targets by host or vpid, a drain, then a clean leaving", "[roster]") {
  DaemonRoster roster = running_roster(4);
  // node2 by its full or short name, daemon 3 by number; never the controller.
  auto chosen = roster.shrink_targets({"node2.cluster"}, {3});
  REQUIRE(chosen);
  CHECK(*chosen == std::vector<Vpid>{2, 3});
  auto unknown = roster.shrink_targets({"elsewhere"}, {});
  REQUIRE_FALSE(unknown);
  CHECK(
      unknown.error().message ==
      "--host elsewhere: no daemon of this DVM runs there (its hosts: head, node1, node2, node3)");
  auto controller = roster.shrink_targets({"localhost"}, {});
  REQUIRE_FALSE(controller);
  CHECK(controller.error().message ==
        "daemon 0 (head) is the controller: it cannot leave (grove stop ends the DVM)");
  auto beyond = roster.shrink_targets({}, {7});
  REQUIRE_FALSE(beyond);
  CHECK(beyond.error().message == "--daemon 7: this DVM has daemons 0 to 3");

  // Draining: still a member (its silence still counts), no longer `up`.
  roster.drain(2);
  CHECK(roster.record(2).state == DaemonStateKind::draining);
  CHECK(roster.living() == 4);
  auto twice = roster.shrink_targets({}, {2});
  REQUIRE_FALSE(twice);
  CHECK(twice.error().message == "daemon 2 (node2) is not in the DVM: draining");

  // The departure goes first, then the daemon is told to leave.
  auto out = roster.remove(2, "removed by grove shrink");
  REQUIRE(out.size() == 3);
  REQUIRE(std::holds_alternative<roster::DeclareDeparture>(out[0]));
  CHECK(std::get<roster::DeclareDeparture>(out[0]).vpid == 2);
  const auto& told = std::get<roster::SendControl>(out[1]);
  CHECK(told.to == 2);
  CHECK(told.tag == daemon_tags::removed);
  CHECK(wire_decode<Eviction>(told.payload)->reason == "removed by grove shrink");
  CHECK(roster.record(2).state == DaemonStateKind::removed);
  CHECK(roster.living() == 3);

  // Its leaving is no loss: its connection closes, its peers report the
  // link, it falls silent; nothing is announced and nobody is evicted.
  CHECK(roster.on_connection_closed(2).empty());
  CHECK(roster.on_link_lost(1, 2).empty());
  CHECK(roster.on_process_ended(2, "exited with status 0").empty());
  CHECK(effects_of<roster::AnnounceLoss>(roster.check_heartbeats(10'000 * kMs)).size() == 2);
  CHECK(roster.record(2).state == DaemonStateKind::removed);
  // (The two others were silent for 10 s: lost, as before.)
  CHECK(roster.remove(2, "again").empty());
}

TEST_CASE("a draining daemon that fails is lost like any other", "[roster]") {
  DaemonRoster roster = running_roster(3);
  roster.drain(1);
  auto out = roster.on_connection_closed(1);
  REQUIRE(effects_of<roster::AnnounceLoss>(out).size() == 1);
  CHECK(roster.record(1).state == DaemonStateKind::failed);
  CHECK(roster.remove(1, "removed by grove shrink").empty());  // too late: it is lost
  CHECK(roster.living() == 2);
}

TEST_CASE("grove shrink --host takes the host's daemons still in the DVM", "[roster]") {
  DaemonRoster roster = make_roster(4);
  for (Vpid vpid = 1; vpid < 4; ++vpid) {
    DaemonReport report = report_of(vpid);
    if (vpid >= 2) report.hostname = "twin";
    roster.on_report(vpid, report, 0);
  }
  roster.mark_running(0);
  roster.on_connection_closed(2);  // one of twin's daemons is lost
  auto chosen = roster.shrink_targets({"twin"}, {});
  REQUIRE(chosen);
  CHECK(*chosen == std::vector<Vpid>{3});
  roster.on_connection_closed(3);
  auto none = roster.shrink_targets({"twin"}, {});
  REQUIRE_FALSE(none);
  CHECK(none.error().message ==
        "daemon 2 (twin) is not in the DVM: failed (its connection to the controller closed)");
}

TEST_CASE("daemons grown into a running DVM are admitted as they report", "[roster]") {
  DaemonRoster roster = running_roster(3);
  const std::vector<Vpid> added = roster.add_daemons(2, "head");
  CHECK(added == std::vector<Vpid>{3, 4});
  CHECK(roster.record(3).state == DaemonStateKind::launching);
  CHECK(roster.record(4).hostname == "head");
  CHECK(roster.living() == 3);
  CHECK_FALSE(roster.unexpected_report(3, 3));
  auto admitted = roster.on_report(3, report_of(3), 5 * kMs);
  // No plain welcome and no start-up table: the driver admits it (its table
  // has every daemon, the newcomer included).
  CHECK(effects_of<roster::SendControl>(admitted).empty());
  CHECK(effects_of<roster::BroadcastEndpointTable>(admitted).empty());
  auto admit = effects_of<roster::AdmitJoiner>(admitted);
  REQUIRE(admit.size() == 1);
  CHECK(admit[0].vpid == 3);
  REQUIRE(admit[0].table.daemons.size() == 5);
  CHECK(admit[0].table.daemons[3].endpoint == "127.0.0.1:1003");
  CHECK(roster.record(3).state == DaemonStateKind::up);
  CHECK(roster.living() == 4);
  // One that never reports is lost like a daemon of the start, once running.
  auto lost = roster.lose(4, "did not report", /*may_still_run=*/true);
  CHECK(effects_of<roster::StartupLoss>(lost).empty());
  CHECK(effects_of<roster::DeclareDeparture>(lost).size() == 1);
  CHECK(roster.record(4).state == DaemonStateKind::failed);
}

TEST_CASE("a host whose daemon was lost gets it back at its old vpid", "[roster]") {
  DaemonRoster roster = running_roster(4);
  (void)roster.lose(2, "missed 3 heartbeats", /*may_still_run=*/true);
  (void)roster.remove(3, "grove shrink");
  // Declared out, but their connections are open: they may still reach the
  // DVM, and their vpids cannot be taken yet.
  CHECK_FALSE(roster.gone(2));
  CHECK_FALSE(roster.revive(2));
  CHECK(roster.record(2).state == DaemonStateKind::failed);
  (void)roster.on_connection_closed(2);
  (void)roster.on_connection_closed(3);
  CHECK(roster.gone(2));
  CHECK(roster.gone(3));
  // node1 is up, node2 lost, node3 removed, node9 new to the DVM; node3 is
  // also found under the name it was started with.
  auto targets = roster.grow_targets({"node2", "10.0.0.3", "node9"}, {"", "", "", "10.0.0.3"});
  REQUIRE(targets.ok());
  CHECK(*targets == std::vector<std::optional<Vpid>>{2, 3, std::nullopt});
  auto refused = roster.grow_targets({"node9", "node1"});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message == "--host node1: daemon 1 (node1) is in the DVM already (up)");
  // The controller's own host too; one host named twice.
  CHECK_FALSE(roster.grow_targets({"localhost"}).ok());
  CHECK_FALSE(roster.grow_targets({"node2", "node2.example.org"}).ok());

  CHECK(roster.revive(2));
  CHECK(roster.record(2).state == DaemonStateKind::launching);
  CHECK(roster.record(2).failure.empty());
  CHECK_FALSE(roster.grow_targets({"node2"}).ok());  // launching again: in the DVM
  CHECK_FALSE(roster.unexpected_report(2, 2));
  auto admitted = roster.on_report(2, report_of(2), 7 * kMs);
  REQUIRE(effects_of<roster::AdmitJoiner>(admitted).size() == 1);
  CHECK(roster.record(2).state == DaemonStateKind::up);
  CHECK(roster.record(2).history == std::vector<std::string>{"up", "lost", "back"});
  CHECK(roster.record(3).history == std::vector<std::string>{"up", "removed"});
  CHECK(roster.living() == 3);
  // An up daemon is not revived by mistake.
  CHECK_FALSE(roster.revive(1));
  CHECK(roster.record(1).state == DaemonStateKind::up);
  // The history keeps its last kMaxHistory entries.
  for (int life = 0; life < 20; ++life) {
    (void)roster.on_connection_closed(2);
    CHECK(roster.revive(2));
    roster.on_report(2, report_of(2), 8 * kMs);
  }
  CHECK(roster.record(2).history.size() == kMaxHistory);
  CHECK(roster.record(2).history.back() == "back");
}

TEST_CASE("a daemon grown in that never reported leaves no place to come back to", "[roster]") {
  DaemonRoster roster = running_roster(2);
  const Vpid added = roster.add_daemons(1, "node5").front();
  (void)roster.lose(added, "could not be started: ssh to node5 exited with status 255",
                    /*may_still_run=*/false);
  CHECK_FALSE(roster.ever_up(added));
  // Grown again, node5 takes a new vpid: the first never had a place in the trees.
  auto targets = roster.grow_targets({"node5"});
  REQUIRE(targets.ok());
  CHECK(*targets == std::vector<std::optional<Vpid>>{std::nullopt});
}
