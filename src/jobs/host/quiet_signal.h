// Signals a job's ranks only when none of them is inside its PMIx
// handshake. libpmix 4.2 answers a connecting client before it tells the
// host; a client that dies in between makes that answer fail, and the
// failure path frees the rank's record twice, which wedges the daemon's
// PMIx server (docs/pmix.md, "What PMIx 4.2 taught us"). So a signal is sent
// in steps. Every rank is stopped (SIGSTOP: nothing new connects), except
// those with a connection to the server still unanswered: they run on (a
// client stopped before it wrote its handshake would hold the server, which
// reads handshakes with a blocking receive, for as long as it is stopped)
// and are stopped once answered. When every rank is stopped and nothing is
// unanswered, or at a deadline, the signal goes and the ranks continue,
// except those a stop signal of the user's left stopped.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "os/timer.h"
#include "util/clock.h"

namespace grove {

// What the stop step must see before the signal goes: the process is
// stopped or gone (read from /proc/PID/stat).
bool process_stopped_or_gone(pid_t pid);

class QuietSignaller {
 public:
  // Those of `roots` whose process tree holds a connection to this daemon's
  // PMIx server that waits for its answer.
  using HandshakesPending = std::function<std::set<pid_t>(const std::vector<pid_t>& roots)>;
  // The process groups (rank pids) to signal, asked again at each step:
  // a rank reaped meanwhile must not be signalled by a stale pid.
  using Groups = std::function<std::vector<pid_t>()>;

  // Without `pending` (no PMIx gate) signals go at once.
  QuietSignaller(event_base* base, HandshakesPending pending, TimeNs max_wait_ns);
  ~QuietSignaller();
  QuietSignaller(const QuietSignaller&) = delete;
  QuietSignaller& operator=(const QuietSignaller&) = delete;

  void signal(Groups groups, int signal);
  std::size_t waiting() const { return requests_.size(); }

 private:
  struct Request {
    Groups groups;
    int signal = 0;
    TimeNs deadline_ns = 0;
    Timer timer;
  };
  void on_tick(Request& request);
  // One step: stops the answered, lets the unanswered run; true when every
  // group is stopped and nothing waits for an answer.
  bool settle(const std::vector<pid_t>& groups) const;
  void finish(Request& request);
  void arm(Request& request, int delay_ms);

  event_base* base_;
  HandshakesPending pending_;
  TimeNs max_wait_ns_;
  std::list<std::unique_ptr<Request>> requests_;
  // Groups a stop signal left stopped, with their leader's start time (a
  // reused pid is another process): a later signal leaves them stopped
  // unless it ends the stop (quiet_signal.cc, ends_stop).
  std::map<pid_t, std::uint64_t> stopped_by_user_;
};

}  // namespace grove
