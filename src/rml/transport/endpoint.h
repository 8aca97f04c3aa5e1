// Where a daemon listens: a numeric IPv4 or IPv6 address and a TCP port.
// Name resolution is the launcher's job; the transport never blocks on DNS.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "util/result.h"

namespace grove {

struct Endpoint {
  std::string host;  // "127.0.0.1", "::1", "0.0.0.0"
  std::uint16_t port = 0;

  // "host:port", with an IPv6 host in brackets: "[::1]:5000".
  std::string to_string() const;
  // Parses what to_string writes. The host must be non-empty and the port a
  // decimal number in 0..65535; whether the host is numeric is checked when
  // it is used (to_socket_address).
  static Result<Endpoint> parse(std::string_view text);

  bool operator==(const Endpoint&) const = default;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const { return storage.ss_family; }
};

// The sockaddr for a numeric host; a host name is an Error.
Result<SocketAddress> to_socket_address(const Endpoint& endpoint);
// The numeric endpoint of an IPv4 or IPv6 sockaddr ("?" host otherwise).
Endpoint endpoint_of(const sockaddr* address, socklen_t length);

}  // namespace grove
