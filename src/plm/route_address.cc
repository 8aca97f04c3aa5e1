#include "plm/route_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace grove {
namespace {

struct FreeAddressInfo {
  void operator()(addrinfo* list) const { freeaddrinfo(list); }
};
using AddressInfo = std::unique_ptr<addrinfo, FreeAddressInfo>;

std::string numeric(const sockaddr* address, socklen_t length) {
  char text[NI_MAXHOST] = {};
  if (getnameinfo(address, length, text, sizeof text, nullptr, 0, NI_NUMERICHOST) != 0) return "";
  return text;
}

Result<AddressInfo> lookup(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* list = nullptr;
  int code = getaddrinfo(host.c_str(), "9", &hints, &list);
  if (code != 0) return Error{"cannot resolve host '" + host + "': " + gai_strerror(code)};
  return AddressInfo(list);
}

// IPv4 first: the transport's listeners and most clusters' networks are IPv4.
const addrinfo* preferred(const addrinfo* list) {
  for (const addrinfo* entry = list; entry != nullptr; entry = entry->ai_next) {
    if (entry->ai_family == AF_INET) return entry;
  }
  return list;
}

}  // namespace

Result<std::string> resolve_host(const std::string& host) {
  auto info = lookup(host);
  if (!info) return info.error();
  const addrinfo* entry = preferred(info->get());
  std::string text = numeric(entry->ai_addr, entry->ai_addrlen);
  if (text.empty()) return Error{"cannot resolve host '" + host + "'"};
  return text;
}

Result<std::string> source_address_toward(const std::string& host) {
  auto info = lookup(host);
  if (!info) return info.error();
  const addrinfo* entry = preferred(info->get());
  int fd = socket(entry->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{std::string("socket: ") + std::strerror(errno)};
  if (connect(fd, entry->ai_addr, entry->ai_addrlen) != 0) {
    std::string reason = std::strerror(errno);
    close(fd);
    return Error{"no route to host '" + host + "': " + reason};
  }
  sockaddr_storage local{};
  socklen_t length = sizeof local;
  int named = getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
  close(fd);
  if (named != 0) return Error{std::string("getsockname: ") + std::strerror(errno)};
  std::string text = numeric(reinterpret_cast<sockaddr*>(&local), length);
  if (text.empty()) return Error{"cannot name the local address toward '" + host + "'"};
  return text;
}

}  // namespace grove
