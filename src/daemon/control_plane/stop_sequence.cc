#include "daemon/control_plane/stop_sequence.h"

namespace grove {
namespace {

// How often the stop reaps again while waiting, and right after a kill.
constexpr std::int64_t kReapPollMs = 20;
constexpr std::int64_t kReapAfterKillMs = 50;

}  // namespace

stop::Outbox StopSequence::begin(const std::string& reason, bool dvm_ready) {
  if (stage_ != Stage::running) return {};
  stage_ = Stage::notifying;
  reason_ = reason;
  stop::Outbox out{stop::EndWork{reason}};
  if (!dvm_ready) {
    // No table, no broadcast: straight to closing.
    stop::Outbox next = to_reaping();
    out.insert(out.end(), next.begin(), next.end());
    return out;
  }
  out.emplace_back(stop::ArmTimer{StopTimer::acknowledge, timeout_ms_});
  out.emplace_back(stop::BroadcastShutdown{});
  return out;
}

stop::Outbox StopSequence::acknowledged() {
  return stage_ == Stage::notifying ? to_reaping() : stop::Outbox{};
}

stop::Outbox StopSequence::process_exited() {
  // An exit while notifying (a rank ended by the stop, a daemon that left)
  // moves on at once, as a landed broadcast does; while reaping, it closes
  // now if the close is still pending, and reaps.
  if (stage_ == Stage::notifying) return to_reaping();
  if (stage_ != Stage::reaping) return {};
  if (!closed_) return close();
  return {stop::Reap{}};
}

stop::Outbox StopSequence::timer_fired(StopTimer timer) {
  switch (timer) {
    case StopTimer::acknowledge:
      if (stage_ == Stage::notifying) {
        stop::Outbox out{stop::Notice{
            "not every daemon acknowledged the shutdown within daemon_stop_timeout_ms"}};
        stop::Outbox next = to_reaping();
        out.insert(out.end(), next.begin(), next.end());
        return out;
      }
      return {};
    case StopTimer::close:
      if (stage_ != Stage::reaping) return {};
      return closed_ ? stop::Outbox{stop::Reap{}} : close();
    case StopTimer::kill:
      if (stage_ != Stage::reaping) return {};
      return {stop::KillStragglers{}, stop::ArmTimer{StopTimer::poll, kReapAfterKillMs}};
    case StopTimer::poll:
      if (stage_ != Stage::reaping) return {};
      return {stop::Reap{}};
  }
  return {};
}

stop::Outbox StopSequence::reaped(bool still_running) {
  if (stage_ != Stage::reaping) return {};
  if (still_running) return {stop::ArmTimer{StopTimer::poll, kReapPollMs}};
  stage_ = Stage::done;
  return {stop::Complete{reason_}};
}

stop::Outbox StopSequence::to_reaping() {
  stage_ = Stage::reaping;
  // Not from inside the callback that brought us here (the runtime's): the
  // close destroys what called it.
  return {stop::ArmTimer{StopTimer::close, 0}};
}

stop::Outbox StopSequence::close() {
  closed_ = true;
  return {stop::CloseConnections{}, stop::ArmTimer{StopTimer::kill, timeout_ms_}, stop::Reap{}};
}

}  // namespace grove
