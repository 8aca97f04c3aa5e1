#include "pmix/server_connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstddef>

#include "os/proc_files.h"

namespace grove {
namespace {

std::optional<int> descriptor_number(const std::string& name) {
  int fd = -1;
  auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), fd);
  if (error != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return fd;
}

std::uint16_t port_of(const sockaddr_storage& address) {
  return ntohs(address.ss_family == AF_INET
                   ? reinterpret_cast<const sockaddr_in&>(address).sin_port
                   : reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
}

bool is_inet(const sockaddr_storage& address) {
  return address.ss_family == AF_INET || address.ss_family == AF_INET6;
}

bool is_listening(int fd) {
  int accepting = 0;
  socklen_t size = sizeof accepting;
  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) == 0 && accepting != 0;
}

// Whether this process has written on the connection (bytes acknowledged
// plus bytes still queued): libpmix writes nothing before its handshake
// reply.
bool server_has_written(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  int queued = 0;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return false;
  if (size >= offsetof(tcp_info, tcpi_bytes_acked) + sizeof info.tcpi_bytes_acked &&
      info.tcpi_bytes_acked > 0)
    return true;
  return ioctl(fd, SIOCOUTQ, &queued) == 0 && queued > 0;
}

std::string address_text(const sockaddr_storage& address) {
  char host[INET6_ADDRSTRLEN] = "?";
  const void* raw =
      address.ss_family == AF_INET
          ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in&>(address).sin_addr)
          : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
  inet_ntop(address.ss_family, raw, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_of(address));
}

// The descriptor's socket address and inode if it is an inet socket.
bool inet_socket(int fd, sockaddr_storage& local, std::uint64_t& inode) {
  struct stat held {};
  if (fstat(fd, &held) != 0 || !S_ISSOCK(held.st_mode)) return false;
  inode = held.st_ino;
  socklen_t length = sizeof local;
  return getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0 && is_inet(local);
}

// `fd`, known to be an accepted connection on one of libpmix's ports.
ServerConnection describe_connection(int fd, std::uint64_t inode, const sockaddr_storage& local) {
  ServerConnection connection{fd, inode, std::nullopt, server_has_written(fd), {}};
  sockaddr_storage peer{};
  socklen_t length = sizeof peer;
  // A stranger may have half-closed its end; one whose end is gone has no
  // peer at all: both are still connections.
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &length) == 0) {
    connection.client = find_tcp_socket(peer, local);
    connection.peer = address_text(peer);
  } else {
    connection.peer = "(gone)";
  }
  return connection;
}

}  // namespace

std::vector<ListeningSocket> listening_tcp_sockets() {
  std::vector<ListeningSocket> listening;
  for (const std::string& name : directory_entries("/proc/self/fd")) {
    std::optional<int> fd = descriptor_number(name);
    sockaddr_storage local{};
    std::uint64_t inode = 0;
    if (!fd || !inet_socket(*fd, local, inode) || !is_listening(*fd)) continue;
    listening.push_back(ListeningSocket{*fd, inode, port_of(local)});
  }
  return listening;
}

std::optional<ServerConnection> server_connection(int fd, const std::set<std::uint16_t>& ports) {
  sockaddr_storage local{};
  std::uint64_t inode = 0;
  if (!inet_socket(fd, local, inode) || ports.count(port_of(local)) == 0 || is_listening(fd))
    return std::nullopt;
  return describe_connection(fd, inode, local);
}

ServerConnections server_connections(const std::set<std::uint16_t>& ports,
                                     const std::set<std::uint64_t>& skip) {
  ServerConnections found;
  for (const std::string& name : directory_entries("/proc/self/fd")) {
    std::optional<int> fd = descriptor_number(name);
    if (!fd) continue;
    struct stat held {};
    if (fstat(*fd, &held) != 0 || !S_ISSOCK(held.st_mode)) continue;
    found.held.insert(held.st_ino);
    if (skip.count(held.st_ino) != 0) continue;
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (getsockname(*fd, reinterpret_cast<sockaddr*>(&local), &length) != 0 || !is_inet(local) ||
        ports.count(port_of(local)) == 0 || is_listening(*fd))
      continue;
    found.connections.push_back(describe_connection(*fd, held.st_ino, local));
  }
  return found;
}

bool still_holds(int fd, std::uint64_t inode) {
  struct stat held {};
  return fstat(fd, &held) == 0 && held.st_ino == inode;
}

void swap_for_closed(int fd, std::uint64_t inode) {
  if (!still_holds(fd, inode)) return;  // closed meanwhile
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    shut_down(fd, inode);
    return;
  }
  close(pair[1]);
  if (dup3(pair[0], fd, O_CLOEXEC) < 0) shut_down(fd, inode);
  close(pair[0]);
}

bool shut_down(int fd, std::uint64_t inode) {
  // The duplicate names the open socket whatever happens to `fd` next.
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return false;
  const bool same = still_holds(copy, inode);
  if (same) shutdown(copy, SHUT_RDWR);
  close(copy);
  return same;
}

}  // namespace grove
