// The controller's orderly stop, as a state machine: tell every daemon
// (a shutdown broadcast), wait for that to land or time out, close every
// connection (each daemon leaves when it sees its connection close), reap
// what exits, kill what does not within daemon_stop_timeout_ms, and finish
// once nothing is left. Sans-IO: inputs are the stop request, the
// broadcast's completion, timers and reaping results; outputs are effects.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace grove {

enum class StopTimer : std::uint8_t {
  acknowledge,  // the shutdown broadcast's deadline
  close,        // close connections on the next loop pass (not inside a transport callback)
  kill,         // what has not exited by now is killed
  poll,         // reap again
};

namespace stop {

// Stop what the DVM was doing: its jobs, a benchmark, the heartbeat checks.
struct EndWork {
  std::string reason;
};
struct BroadcastShutdown {};
struct ArmTimer {
  StopTimer timer = StopTimer::poll;
  std::int64_t delay_ms = 0;
};
struct CloseConnections {};
// Kill every daemon process and launcher session still running.
struct KillStragglers {};
// Reap what exited; answer with StopSequence::reaped.
struct Reap {};
// Everything ended: clean up, answer the stop requests, leave.
struct Complete {
  std::string reason;
};
struct Notice {
  std::string text;  // an error line for the log
};

using Effect = std::variant<EndWork, BroadcastShutdown, ArmTimer, CloseConnections, KillStragglers,
                            Reap, Complete, Notice>;
using Outbox = std::vector<Effect>;

}  // namespace stop

class StopSequence {
 public:
  enum class Stage : std::uint8_t { running, notifying, reaping, done };

  explicit StopSequence(std::int64_t timeout_ms) : timeout_ms_(timeout_ms) {}

  // The first call starts the stop; later ones change nothing (their
  // requesters are answered when it completes). `dvm_ready`: the endpoint
  // table landed, so a shutdown broadcast can reach every daemon.
  stop::Outbox begin(const std::string& reason, bool dvm_ready);
  // The shutdown broadcast reached every daemon.
  stop::Outbox acknowledged();
  // A process of ours exited (SIGCHLD) while stopping.
  stop::Outbox process_exited();
  stop::Outbox timer_fired(StopTimer timer);
  // The answer to a Reap: whether anything is still running.
  stop::Outbox reaped(bool still_running);

  Stage stage() const { return stage_; }
  bool stopping() const { return stage_ != Stage::running; }
  const std::string& reason() const { return reason_; }

 private:
  stop::Outbox to_reaping();
  stop::Outbox close();

  std::int64_t timeout_ms_;
  Stage stage_ = Stage::running;
  bool closed_ = false;
  std::string reason_;
};

}  // namespace grove
