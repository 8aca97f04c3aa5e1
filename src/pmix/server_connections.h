// The server ends of PMIx connections as this process holds them: which
// ports libpmix listens on, which accepted connections still wait for their
// handshake, and how grove takes one from libpmix. Shared by the client gate
// (at each admission) and the handshake watchdog (when libpmix is stuck
// reading one). Linux only: descriptors are read from /proc/self/fd.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pmix/socket_owner.h"

namespace grove {

// A TCP socket of this process in the listening state.
struct ListeningSocket {
  int fd = -1;
  std::uint64_t inode = 0;
  std::uint16_t port = 0;
};
std::vector<ListeningSocket> listening_tcp_sockets();

// An accepted connection on one of libpmix's ports.
struct ServerConnection {
  int fd = -1;
  std::uint64_t inode = 0;          // the server end
  std::optional<SocketEnd> client;  // nothing: no live client end
  // libpmix has written on it: its handshake was read and answered.
  bool answered = false;
  std::string peer;  // "127.0.0.1:43210", for the log
};

// The descriptor as such a connection; nothing if it is not one (not a TCP
// socket, listening, or on another port).
std::optional<ServerConnection> server_connection(int fd, const std::set<std::uint16_t>& ports);

struct ServerConnections {
  std::vector<ServerConnection> connections;  // those not skipped
  std::set<std::uint64_t> held;               // every socket inode this process holds
};
// Every accepted connection on `ports` whose server end is not in `skip`.
ServerConnections server_connections(const std::set<std::uint16_t>& ports,
                                     const std::set<std::uint64_t>& skip);

// Whether descriptor `fd` is still the socket `inode` (not closed and reused).
bool still_holds(int fd, std::uint64_t inode);

// Puts a closed socket in place of descriptor `fd` if it still holds
// `inode`: libpmix, which has not read the handshake yet, then reads
// end-of-file and drops the connection before looking up the rank it claims.
void swap_for_closed(int fd, std::uint64_t inode);

// Shuts the connection down in both directions if `fd` still holds `inode`
// (checked on a duplicate of the descriptor, so a descriptor closed and
// reused meanwhile is never touched). A thread blocked reading it wakes to
// end-of-file. Returns whether it was shut.
bool shut_down(int fd, std::uint64_t inode);

}  // namespace grove
