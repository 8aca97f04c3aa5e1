// Loopback TCP sockets for tests: a listener on a free port, a client
// connected to one.
#pragma once

#include <cstdint>

namespace grove::test {

// A listening socket on 127.0.0.1 at a port the kernel picks (`port`);
// -1 if it could not be made.
int listen_loopback(std::uint16_t& port);
// A socket connected to 127.0.0.1:`port`; -1 if the connection failed.
int connect_loopback(std::uint16_t port);

}  // namespace grove::test
