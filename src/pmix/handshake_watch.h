// Which stalled PMIx handshakes to cut, and when. libpmix 4.2 reads a new
// connection's handshake with a blocking receive on its progress thread, so
// one connection that sends nothing stops every PMIx client of the daemon
// (and every registration). The watchdog (handshake_watchdog.h) sees which
// connections libpmix is blocked on and asks this class what to do: cut
// another user's at once (no rank of this daemon is another user's), and
// cut one of this user's once it has held libpmix for longer than the
// bound. Pure: what was seen and the time are handed in.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.h"

namespace grove {

// The descriptor a thread is blocked reading (read, recvfrom, recvmsg), from
// the text of /proc/PID/task/TID/syscall ("45 0x15 0x7f.. 0x10 0x100 ...");
// nothing for any other state ("running", "-1 ...", another call).
std::optional<int> blocked_read_fd(std::string_view syscall_text);

// A connection on a PMIx port that libpmix is blocked reading.
struct StalledHandshake {
  int fd = -1;
  std::uint64_t inode = 0;  // the server end: one connection, whatever its fd
  // The uid the kernel gives the client end; nothing: no live end is known.
  std::optional<uid_t> client_uid;
  std::string peer;  // for the log
};

enum class CutReason {
  other_user,  // the client end is another user's
  too_slow,    // this user's, and the handshake took longer than the bound
};
std::string_view cut_reason_text(CutReason reason);

struct HandshakeCut {
  StalledHandshake connection;
  CutReason reason = CutReason::too_slow;
  TimeNs stalled_ns = 0;  // how long it had held libpmix when seen last
};

class HandshakeWatch {
 public:
  // `cut_other_users`: pmix_verify_clients (without the gate a rank may be
  // anyone). `timeout_ns` 0: this user's connections are never cut.
  HandshakeWatch(uid_t self, bool cut_other_users, TimeNs timeout_ns)
      : self_(self), cut_other_users_(cut_other_users), timeout_ns_(timeout_ns) {}

  // The connections libpmix is blocked on now; returns those to cut. One
  // not seen now has been read or closed meanwhile and is forgotten.
  std::vector<HandshakeCut> observe(const std::vector<StalledHandshake>& stalled, TimeNs now);
  // Whether a stalled handshake is being timed (check again soon).
  bool timing() const { return !since_.empty(); }

 private:
  uid_t self_;
  bool cut_other_users_;
  TimeNs timeout_ns_;
  std::map<std::uint64_t, TimeNs> since_;  // server inode -> first seen stalled
};

}  // namespace grove
