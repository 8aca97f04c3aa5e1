// Who may connect to the ranks' PMIx server as a rank. libpmix listens on
// loopback TCP and believes the uid a client claims, so any local user who
// knows a job's nspace and the server's port could act as one of its ranks
// (abort the job, join its fences). The gate asks the kernel instead: a
// connection claiming rank R is admitted only if its client end is a socket
// held by the process this daemon started as rank R, or by a descendant of
// it, and that connection has not been admitted before. libpmix 4.2 ignores
// a refusal from the host, so a refused connection is also taken from
// libpmix before it reads a request: its descriptor is swapped for a closed
// socket while its handshake is unread, or for a silent one held open once
// libpmix has answered it (seeing that one close would make libpmix forget
// the real rank). docs/pmix.md has the rationale and the limits.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pmix/server_connections.h"

namespace grove {

// One line of /proc/net/tcp or /proc/net/tcp6 (socket_owner's fallback). Endpoints stay in the
// kernel's hex text ("0100007F:1F90"): they are only compared, never decoded.
struct TcpSocketEntry {
  std::string local;
  std::string remote;
  uid_t uid = 0;
  std::uint64_t inode = 0;
  unsigned state = 0;  // the kernel's TCP state: 1 established, 2 SYN sent, ...
};

// Parses the text of /proc/net/tcp or /proc/net/tcp6 (header line first);
// malformed lines are skipped.
std::vector<TcpSocketEntry> parse_proc_net_tcp(std::string_view text);

// Whether one of `client_inodes` (sockets a process holds) is a connection
// to one of `ports`, established or being made, whose server end is not in
// `admitted`: a handshake the server has not answered yet (in 4.2 the host
// admits a client right after answering it). Pure: the table is handed in.
bool unanswered_connection(const std::vector<TcpSocketEntry>& table,
                           const std::set<std::uint64_t>& client_inodes,
                           const std::set<std::uint16_t>& ports,
                           const std::set<std::uint64_t>& admitted);

// The socket inodes among the open descriptors of `pid` ("self" for this
// process when pid is 0); empty if they cannot be read.
std::set<std::uint64_t> socket_inodes_of(pid_t pid);

// The socket inodes held by `root` and its descendants (breadth first, at
// most a few thousand processes: a runaway fork tree must not stall anyone).
std::set<std::uint64_t> tree_socket_inodes(pid_t root);

// The live children of `pid` (every thread's), from /proc/PID/task/*/children.
std::vector<pid_t> children_of(pid_t pid);

class ClientGate {
 public:
  ClientGate() = default;
  ClientGate(const ClientGate&) = delete;
  ClientGate& operator=(const ClientGate&) = delete;
  // Closes the silent socket: only after libpmix has been finalized.
  ~ClientGate();

  // A TCP port the PMIx server listens on (from its URIs); until one is
  // known nothing is admitted.
  void add_listen_port(std::uint16_t port);
  // The process started as (nspace, rank). Call before it can exec.
  void expect(const std::string& nspace, std::uint32_t rank, pid_t pid);
  // The process has been reaped: its pid may now be anyone's.
  void forget(const std::string& nspace, std::uint32_t rank);
  void forget_job(const std::string& nspace);

  // Called on PMIx's progress thread while the connection claiming (nspace,
  // rank) waits for its handshake reply. Nothing when admitted; otherwise
  // why not.
  std::optional<std::string> admit(const std::string& nspace, std::uint32_t rank);

  // On the daemon's loop: those of `roots` whose process tree holds a
  // connection to the PMIx server that waits for its answer
  // (jobs/host/quiet_signal.h).
  std::set<pid_t> handshakes_pending(const std::vector<pid_t>& roots);

 private:
  using Expected = std::map<std::pair<std::string, std::uint32_t>, pid_t>;
  // The connections on `ports` not admitted yet (and admitted_ pruned of
  // those closed), read once per decision.
  std::vector<ServerConnection> waiting_connections(const std::set<std::uint16_t>& ports);
  bool connected_from_tree(pid_t root, const std::vector<ServerConnection>& waiting);
  // Cuts the waiting connections whose client end belongs to another user,
  // or has no live client end at all: never a rank of this daemon.
  void cut_foreign(std::vector<ServerConnection>& waiting);
  // Cuts every waiting connection whose client end no process started here
  // (nor a descendant) holds.
  void cut_strangers(const std::vector<ServerConnection>& waiting, const Expected& expected);
  // Takes one waiting connection from libpmix: closed if its handshake is
  // unread, silenced if libpmix has answered it. On PMIx's progress thread.
  void remove_connection(const ServerConnection& connection);

  // expect/forget run on the daemon's loop, admit on PMIx's progress thread:
  // the lock guards only these two, never a scan of /proc.
  std::mutex mutex_;
  std::set<std::uint16_t> listen_ports_;
  Expected expected_;
  // Server ends (socket inodes in this process) already admitted; pruned of
  // closed ones at each admission. admit writes it, handshake_pending reads.
  std::mutex admitted_mutex_;
  std::set<std::uint64_t> admitted_;
  // The silent socket (both ends held, never read) that refused, answered
  // connections become; touched on PMIx's progress thread only.
  int sink_[2] = {-1, -1};
};

}  // namespace grove
