#include "rml/transport/endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

namespace grove {

std::string Endpoint::to_string() const {
  std::string port_text = std::to_string(port);
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + port_text;
  return host + ":" + port_text;
}

Result<Endpoint> Endpoint::parse(std::string_view text) {
  std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return Error{"endpoint '" + std::string(text) + "' has no port (expected host:port)"};
  }
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return Error{"endpoint '" + std::string(text) + "': an IPv6 host needs brackets ([::1]:port)"};
  }
  if (host.empty()) return Error{"endpoint '" + std::string(text) + "' has no host"};
  unsigned port = 0;
  auto [end, error] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || error != std::errc{} || end != port_text.data() + port_text.size() ||
      port > 65535) {
    return Error{"endpoint '" + std::string(text) + "' has a bad port (expected 0..65535)"};
  }
  return Endpoint{std::string(host), static_cast<std::uint16_t>(port)};
}

Result<SocketAddress> to_socket_address(const Endpoint& endpoint) {
  SocketAddress address;
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
  if (::inet_pton(AF_INET, endpoint.host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(endpoint.port);
    address.length = sizeof(sockaddr_in);
    return address;
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
  if (::inet_pton(AF_INET6, endpoint.host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(endpoint.port);
    address.length = sizeof(sockaddr_in6);
    return address;
  }
  return Error{"'" + endpoint.host + "' is not a numeric IPv4 or IPv6 address"};
}

Endpoint endpoint_of(const sockaddr* address, socklen_t length) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    ::inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host);
    return Endpoint{host, ntohs(v4->sin_port)};
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host);
    return Endpoint{host, ntohs(v6->sin6_port)};
  }
  return Endpoint{host, 0};
}

}  // namespace grove
