// A thread of grove's beside libpmix's that keeps libpmix's progress thread
// from being held by a connection that sends nothing. libpmix 4.2 reads each
// new connection's handshake with a blocking receive on that thread: one
// idle TCP connection to a PMIx port, from any local user, stopped every
// client of the daemon and every registration until it closed. The watchdog
// looks at what libpmix's threads are blocked on (/proc/self/task/*/syscall)
// and, through handshake_watch.h's rules, shuts down the connection holding
// one: another user's at once (and with it every other user's connection
// still waiting for its handshake), this user's past the bound. Shut down,
// the blocked receive returns end-of-file and libpmix drops the connection.
//
// Cost: nothing while no connection arrives but a look every
// `idle_interval`; for `busy_for` after each arrival (an edge-triggered
// epoll on libpmix's listening sockets) a look every `busy_interval`. A
// look reads one small /proc file per thread of the daemon.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "os/fd.h"
#include "pmix/handshake_watch.h"
#include "pmix/server_connections.h"
#include "util/result.h"

namespace grove {

struct HandshakeWatchdogOptions {
  std::vector<ListeningSocket> listeners;  // libpmix's
  bool cut_other_users = true;             // pmix_verify_clients
  TimeNs timeout_ns = 1'000'000'000;       // pmix_handshake_timeout_ms; 0: never for slowness
  TimeNs busy_interval_ns = 10'000'000;
  TimeNs busy_for_ns = 1'000'000'000;
  TimeNs idle_interval_ns = 500'000'000;
};

class HandshakeWatchdog {
 public:
  // Runs on the watchdog's thread, once per connection cut.
  using CutReport = std::function<void(const HandshakeCut&)>;
  static Result<std::unique_ptr<HandshakeWatchdog>> start(HandshakeWatchdogOptions options,
                                                          CutReport report);
  ~HandshakeWatchdog();  // stops the thread and joins it
  HandshakeWatchdog(const HandshakeWatchdog&) = delete;
  HandshakeWatchdog& operator=(const HandshakeWatchdog&) = delete;

 private:
  HandshakeWatchdog(HandshakeWatchdogOptions options, CutReport report);
  void run();
  void look(TimeNs now);
  // The connections on PMIx ports that a thread of this process is blocked
  // reading, not yet answered by libpmix.
  std::vector<StalledHandshake> stalled_now() const;
  // Every other user's connection still waiting for its handshake, whether
  // or not libpmix reads it yet.
  void cut_other_users_waiting();
  void cut(const HandshakeCut& cut);

  HandshakeWatchdogOptions options_;
  CutReport report_;
  std::set<std::uint16_t> ports_;
  HandshakeWatch watch_;
  // Connections shut down that libpmix may still hold: never cut twice.
  static constexpr std::size_t kShutRemembered = 4096;
  std::set<std::uint64_t> shut_;
  Fd epoll_;
  Fd wake_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace grove
