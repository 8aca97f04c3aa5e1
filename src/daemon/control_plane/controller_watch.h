// A daemon's judgement of its controller: a heartbeat goes out every
// interval, and any word from the controller (its heartbeat answers above
// all) keeps it trusted. A controller that holds its connections open but
// answers nothing for `timeout` is as lost as one whose connection closed:
// the daemon leaves with its ranks. Pure: time is handed in.
#pragma once

#include <optional>
#include <string>

#include "daemon/control_plane/control_messages.h"
#include "daemon/control_plane/liveness.h"

namespace grove {

class ControllerWatch {
 public:
  // timeout_ns 0: never judge the controller by its silence.
  ControllerWatch(TimeNs interval_ns, TimeNs timeout_ns, TimeNs now);

  void heard(TimeNs now) { heard_ns_ = now; }
  // The controller's answer to a heartbeat: our own send time, back.
  void answered(const Heartbeat& answer, TimeNs now);
  TimeNs rtt_ns() const { return rtt_ns_; }

  struct Beat {
    Heartbeat heartbeat;               // to send to the controller
    std::optional<std::string> leave;  // why this daemon leaves the DVM, if it does
  };
  // Every interval.
  Beat beat(TimeNs now);

 private:
  std::optional<SilenceWatch> watch_;
  TimeNs heard_ns_ = 0;
  TimeNs rtt_ns_ = 0;  // of the last answered heartbeat
};

}  // namespace grove
