#include "os/binary_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace grove {
namespace {

Error errno_error(const std::string& what, const std::string& path) {
  return Error{what + " " + path + ": " + std::strerror(errno)};
}

}  // namespace

Status ensure_directory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) {
    struct stat info {};
    if (::stat(dir.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return ok_status();
    return Error{"not a directory: " + dir};
  }
  return errno_error("cannot create", dir);
}

Status write_file_atomically(const std::string& path, std::span<const std::byte> bytes) {
  const std::string temporary = path + ".part";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error("cannot write", temporary);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Error error = errno_error("cannot write", temporary);
      ::close(fd);
      ::unlink(temporary.c_str());
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    Error error = errno_error("cannot write", temporary);
    ::unlink(temporary.c_str());
    return error;
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    Error error = errno_error("cannot rename to", path);
    ::unlink(temporary.c_str());
    return error;
  }
  return ok_status();
}

Result<Bytes> read_binary_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("cannot read", path);
  Bytes bytes;
  std::byte chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Error error = errno_error("cannot read", path);
      ::close(fd);
      return error;
    }
    if (n == 0) break;
    if (bytes.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return Error{path + " is larger than " + std::to_string(max_bytes) + " bytes"};
    }
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return bytes;
}

}  // namespace grove
