// grove grow at the controller: more daemons join the running DVM. Each is
// started on this host (--join), reports like any daemon, and is admitted:
// every daemon learns its endpoint, the engine declares it in a new epoch
// (a join: the trees take it in as the return of a vpid that was always
// there), and its welcome carries its engine's seed. Jobs started afterwards
// may use it; running ones are not touched.
#include <signal.h>

#include <algorithm>

#include "daemon/controller.h"
#include "daemon/host_info.h"
#include "grpcomm/join_seed.h"
#include "plm/local_launcher.h"

namespace grove {

namespace {
// A joiner that has not reported by then is given up (as at the start).
constexpr std::int64_t kJoinDeadlineMs = 30'000;
}  // namespace

void Controller::request_grow(const GrowRequest& request, ReplyFn reply) {
  if (launch_.supervisor.phase() != LaunchSupervisor::Phase::ready ||
      stopping_.sequence.stopping()) {
    reply(error_reply("the DVM is not running: it cannot grow now"));
    return;
  }
  if (launch_.growth) {
    reply(error_reply("another grove grow is still under way"));
    return;
  }
  if (options_.plan) {
    reply(
        error_reply("grove grow --local grows a DVM started on this host (grove start "
                    "--local); this one was started on a host list"));
    return;
  }
  const std::string groved = options_.groved_path.empty() ? find_groved() : options_.groved_path;
  const std::vector<Vpid> added =
      roster_->add_daemons(request.local, roster_->record(kControllerVpid).hostname);
  const auto size = static_cast<std::uint32_t>(roster_->records().size());
  Growth growth{std::move(reply), {}, {}, {}};
  for (Vpid vpid : added) {
    auto directory = create_daemon_directory(identity_.dvm.directory, vpid);
    Result<int> pid = directory ? Result<int>(0) : Result<int>(directory.error());
    if (directory) {
      LaunchRequest launch{groved,
                           vpid,
                           size,
                           identity_.endpoint,
                           *directory,
                           params_.child_arguments(),
                           identity_.secret,
                           std::string(),
                           std::nullopt,
                           /*joining=*/true};
      pid = launch_local_daemon(launch);
    }
    if (!pid) {
      apply(roster_->lose(vpid, "could not be started: " + pid.error().message,
                          /*may_still_run=*/false));
      continue;
    }
    roster_->launched(vpid, *pid);
    growth.waiting.push_back(vpid);
  }
  log_.notice("daemon", "grove grow: starting %zu daemon(s) on this host", growth.waiting.size());
  growth.deadline = Timer(loop_->base(), [this] { grow_overdue(); });
  growth.deadline.arm(kJoinDeadlineMs);
  launch_.growth = std::move(growth);
  finish_growth();  // none could be started: answer at once
}

void Controller::admit_joiner(roster::AdmitJoiner& admit) {
  // Everyone learns where it listens before the notice that makes it their
  // peer: the table's broadcast goes out first, on the same tree.
  runtime_->broadcast(daemon_tags::endpoint_table, encode(admit.table));
  if (!runtime_->declare_return(admit.vpid)) {
    daemon_lost(admit.vpid, "the engine refused its join", /*may_still_run=*/true);
    return;
  }
  JoinWelcome welcome{std::move(admit.table), encode_join_seed(runtime_->join_seed())};
  runtime_->send_control(admit.vpid, daemon_tags::welcome, encode(welcome));
  log_.verbose("daemon", 1, "%s joined the DVM at epoch %llu",
               roster_->describe(admit.vpid).c_str(),
               static_cast<unsigned long long>(runtime_->engine().membership().epoch()));
  if (!launch_.growth) return;
  auto& waiting = launch_.growth->waiting;
  if (std::erase(waiting, admit.vpid) > 0) launch_.growth->joined.push_back(admit.vpid);
  finish_growth();
}

void Controller::grow_overdue() {
  if (!launch_.growth) return;
  const std::vector<Vpid> late = launch_.growth->waiting;
  for (Vpid vpid : late)
    daemon_lost(vpid, "did not report within 30 s of grove grow", /*may_still_run=*/true);
  launch_.growth->waiting.clear();
  finish_growth();
}

void Controller::finish_growth() {
  if (!launch_.growth) return;
  // One that was lost before it reported (it exited, its connection closed)
  // is waited for no more.
  std::erase_if(launch_.growth->waiting, [this](Vpid vpid) {
    return roster_->record(vpid).state != DaemonStateKind::launching;
  });
  if (!launch_.growth->waiting.empty()) return;
  Growth growth = std::move(*launch_.growth);
  launch_.growth.reset();
  nlohmann::json joined = nlohmann::json::array();
  for (Vpid vpid : growth.joined) {
    const DaemonRecord& record = roster_->record(vpid);
    if (record.state == DaemonStateKind::up)
      joined.push_back({{"vpid", vpid}, {"host", record.hostname}});
  }
  if (joined.empty()) {
    growth.reply(error_reply("no daemon joined the DVM (see grove log)"));
    return;
  }
  growth.reply({{"ok", true}, {"joined", joined}, {"daemons", roster_->living()}});
}

}  // namespace grove
