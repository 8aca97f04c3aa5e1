// Which local address other hosts reach this one at: the source address the
// kernel would use toward a given host. No packet is sent (a UDP socket is
// connected, then asked for its name).
#pragma once

#include <string>

#include "util/result.h"

namespace grove {

// Resolves `host` (a name or a numeric address; IPv4 preferred) to a numeric address.
Result<std::string> resolve_host(const std::string& host);

// The numeric local address of the route toward `host`.
Result<std::string> source_address_toward(const std::string& host);

}  // namespace grove
