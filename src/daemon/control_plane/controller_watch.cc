#include "daemon/control_plane/controller_watch.h"

#include <cstdio>

namespace grove {

ControllerWatch::ControllerWatch(TimeNs interval_ns, TimeNs timeout_ns, TimeNs now)
    : heard_ns_(now) {
  if (timeout_ns == 0) return;
  watch_.emplace(interval_ns, timeout_ns);
  watch_->check(now);
}

void ControllerWatch::answered(const Heartbeat& answer, TimeNs now) {
  heard_ns_ = now;
  if (answer.sent_ns <= now) rtt_ns_ = now - answer.sent_ns;
}

ControllerWatch::Beat ControllerWatch::beat(TimeNs now) {
  Beat beat{Heartbeat{now}, std::nullopt};
  if (!watch_) return beat;
  heard_ns_ += watch_->check(now);  // our own stall is not its silence
  if (!watch_->silent_too_long(heard_ns_, now)) return beat;
  char text[128];
  std::snprintf(text, sizeof text,
                "the controller has not answered for %.1f s (daemon_controller_timeout_ms)",
                static_cast<double>(now - heard_ns_) / 1e9);
  beat.leave = text;
  return beat;
}

}  // namespace grove
