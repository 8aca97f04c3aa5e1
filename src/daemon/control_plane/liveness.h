// Judging silence fairly. A watcher checks every `interval`; when a check
// runs far later than that, the watcher itself was not running (SIGSTOP, a
// debugger, a swapped-out or starved host), and the silence it sees is its
// own: that stretch is not held against the watched. Pure: time is handed in.
#pragma once

#include "util/clock.h"

namespace grove {

class SilenceWatch {
 public:
  SilenceWatch(TimeNs interval_ns, TimeNs limit_ns)
      : interval_ns_(interval_ns), limit_ns_(limit_ns) {}

  // Call at every check, before judging anyone. Returns the stretch of this
  // check's gap that was the watcher's own stall (0 when on time): add it to
  // every watched party's last-heard time.
  TimeNs check(TimeNs now) {
    TimeNs gap = last_check_ns_ == 0 || now < last_check_ns_ ? 0 : now - last_check_ns_;
    last_check_ns_ = now;
    // A check up to one interval late is ordinary jitter; beyond that, the
    // whole delay past the schedule is the watcher's.
    return gap > 2 * interval_ns_ ? gap - interval_ns_ : 0;
  }

  bool silent_too_long(TimeNs last_heard_ns, TimeNs now) const {
    return now > last_heard_ns && now - last_heard_ns > limit_ns_;
  }

 private:
  TimeNs interval_ns_;
  TimeNs limit_ns_;
  TimeNs last_check_ns_ = 0;
};

}  // namespace grove
