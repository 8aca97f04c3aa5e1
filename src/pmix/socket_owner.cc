#include "pmix/socket_owner.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "os/proc_files.h"
#include "pmix/client_gate.h"

namespace grove {
namespace {

enum class Lookup { found, absent, unavailable };

std::uint16_t port_of(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET)
    return ntohs(reinterpret_cast<const sockaddr_in&>(address).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(address).sin6_port);
}

void copy_address(const sockaddr_storage& address, __be32 out[4]) {
  if (address.ss_family == AF_INET) {
    std::memcpy(out, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, 4);
  } else {
    std::memcpy(out, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, 16);
  }
}

Lookup ask_netlink(const sockaddr_storage& local, const sockaddr_storage& remote, SocketEnd& end) {
  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return Lookup::unavailable;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } message{};
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  message.request.sdiag_family = static_cast<std::uint8_t>(local.ss_family);
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0U;
  message.request.id.idiag_sport = htons(port_of(local));
  message.request.id.idiag_dport = htons(port_of(remote));
  copy_address(local, message.request.id.idiag_src);
  copy_address(remote, message.request.id.idiag_dst);
  message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  Lookup result = Lookup::unavailable;
  if (sendto(fd, &message, sizeof message, 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof kernel) == static_cast<ssize_t>(sizeof message)) {
    alignas(nlmsghdr) char reply[8192];
    ssize_t got;
    do {
      got = recv(fd, reply, sizeof reply, 0);
    } while (got < 0 && errno == EINTR);
    const auto* header = reinterpret_cast<const nlmsghdr*>(reply);
    if (got >= static_cast<ssize_t>(sizeof(nlmsghdr)) && NLMSG_OK(header, got)) {
      if (header->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
          header->nlmsg_len >= NLMSG_LENGTH(sizeof(inet_diag_msg))) {
        const auto* diag = static_cast<const inet_diag_msg*>(NLMSG_DATA(header));
        end.uid = diag->idiag_uid;
        end.inode = diag->idiag_inode;
        result = end.inode != 0 ? Lookup::found : Lookup::absent;
      } else if (header->nlmsg_type == NLMSG_ERROR &&
                 header->nlmsg_len >= NLMSG_LENGTH(sizeof(nlmsgerr))) {
        const auto* error = static_cast<const nlmsgerr*>(NLMSG_DATA(header));
        if (error->error == -ENOENT) result = Lookup::absent;
      }
    }
  }
  close(fd);
  return result;
}

}  // namespace

std::string proc_net_endpoint(const sockaddr_storage& address) {
  char text[64];
  if (address.ss_family == AF_INET) {
    std::uint32_t raw = 0;
    std::memcpy(&raw, &reinterpret_cast<const sockaddr_in&>(address).sin_addr, 4);
    std::snprintf(text, sizeof text, "%08X:%04X", raw, port_of(address));
    return text;
  }
  if (address.ss_family == AF_INET6) {
    std::uint32_t raw[4];
    std::memcpy(raw, &reinterpret_cast<const sockaddr_in6&>(address).sin6_addr, 16);
    std::snprintf(text, sizeof text, "%08X%08X%08X%08X:%04X", raw[0], raw[1], raw[2], raw[3],
                  port_of(address));
    return text;
  }
  return {};
}

std::optional<SocketEnd> find_tcp_socket(const sockaddr_storage& local,
                                         const sockaddr_storage& remote) {
  if ((local.ss_family != AF_INET && local.ss_family != AF_INET6) ||
      local.ss_family != remote.ss_family)
    return std::nullopt;
  SocketEnd end;
  switch (ask_netlink(local, remote, end)) {
    case Lookup::found:
      return end;
    case Lookup::absent:
      return std::nullopt;
    case Lookup::unavailable:
      break;
  }
  const std::string want_local = proc_net_endpoint(local);
  const std::string want_remote = proc_net_endpoint(remote);
  const char* table = local.ss_family == AF_INET ? "/proc/net/tcp" : "/proc/net/tcp6";
  for (const TcpSocketEntry& entry : parse_proc_net_tcp(read_whole_file(table))) {
    if (entry.inode != 0 && entry.local == want_local && entry.remote == want_remote)
      return SocketEnd{entry.uid, entry.inode};
  }
  return std::nullopt;
}

}  // namespace grove
