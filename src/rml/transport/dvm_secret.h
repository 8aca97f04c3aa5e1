// The per-DVM secret every rml connection proves knowledge of (see
// handshake.h). The controller generates it once per DVM and hands it to each
// daemon over a private file descriptor: an inherited pipe or the daemon's
// stdin (through ssh). Never on a command line, in the environment, or in a
// file others can read. On the wire it is exactly kDvmSecretSize raw bytes.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "rml/transport/handshake.h"
#include "util/result.h"

namespace grove {

// kDvmSecretSize bytes from the system's CSPRNG.
std::vector<std::byte> generate_dvm_secret();

// Writes the secret (exactly kDvmSecretSize bytes) to fd, retrying short
// writes and EINTR. Does not close fd.
Status write_secret(int fd, std::span<const std::byte> secret);

// Reads exactly kDvmSecretSize bytes from fd (retrying short reads and EINTR);
// end of file before that is an Error saying how many bytes arrived. Reads
// nothing beyond the secret, so fd may carry more data after it. Does not close fd.
Result<std::vector<std::byte>> read_secret(int fd);

}  // namespace grove
