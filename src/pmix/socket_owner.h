// What the kernel says about the other end of a loopback TCP connection: the
// socket's inode (to find the process holding it) and the uid that made it.
// Asked over NETLINK_SOCK_DIAG, one exact lookup per socket; where that is
// not available, from /proc/net/tcp{,6} (much slower: the kernel walks its
// whole connection table for each read).
#pragma once

#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace grove {

struct SocketEnd {
  uid_t uid = 0;
  std::uint64_t inode = 0;
};

// The live TCP socket whose local address is `local` and whose peer is
// `remote`; nothing if there is none (closed, or not on this host).
std::optional<SocketEnd> find_tcp_socket(const sockaddr_storage& local,
                                         const sockaddr_storage& remote);

// The endpoint as /proc/net/tcp{,6} prints it ("0100007F:1F90"); empty for a
// family other than AF_INET and AF_INET6.
std::string proc_net_endpoint(const sockaddr_storage& address);

}  // namespace grove
