#include "rml/transport/dvm_secret.h"

#include <sodium.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace grove {

std::vector<std::byte> generate_dvm_secret() {
  if (sodium_init() < 0) {
    std::fputs("grove: libsodium failed to initialise\n", stderr);
    std::abort();
  }
  std::vector<std::byte> secret(kDvmSecretSize);
  randombytes_buf(secret.data(), secret.size());
  return secret;
}

Status write_secret(int fd, std::span<const std::byte> secret) {
  if (secret.size() != kDvmSecretSize) {
    return Error{"DVM secret must be " + std::to_string(kDvmSecretSize) + " bytes, got " +
                 std::to_string(secret.size())};
  }
  std::size_t written = 0;
  while (written < secret.size()) {
    ssize_t result = ::write(fd, secret.data() + written, secret.size() - written);
    if (result < 0) {
      if (errno == EINTR) continue;
      return Error{"cannot write the DVM secret to fd " + std::to_string(fd) + ": " +
                   std::strerror(errno)};
    }
    written += static_cast<std::size_t>(result);
  }
  return ok_status();
}

Result<std::vector<std::byte>> read_secret(int fd) {
  std::vector<std::byte> secret(kDvmSecretSize);
  std::size_t got = 0;
  while (got < secret.size()) {
    ssize_t result = ::read(fd, secret.data() + got, secret.size() - got);
    if (result < 0) {
      if (errno == EINTR) continue;
      sodium_memzero(secret.data(), secret.size());
      return Error{"cannot read the DVM secret from fd " + std::to_string(fd) + ": " +
                   std::strerror(errno)};
    }
    if (result == 0) {
      sodium_memzero(secret.data(), secret.size());
      return Error{"short read of the DVM secret from fd " + std::to_string(fd) + ": got " +
                   std::to_string(got) + " of " + std::to_string(kDvmSecretSize) + " bytes"};
    }
    got += static_cast<std::size_t>(result);
  }
  return secret;
}

}  // namespace grove
