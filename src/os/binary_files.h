// Whole binary files: written so that a reader sees the old file or the new
// one, never half of one (a temporary beside it, then rename), and read
// with a bound, so a huge or endless file cannot take the memory.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "util/bytes.h"
#include "util/result.h"

namespace grove {

// Creates `dir` (one level) if it is not there.
Status ensure_directory(const std::string& dir);
Status write_file_atomically(const std::string& path, std::span<const std::byte> bytes);
// Refuses a file longer than max_bytes.
Result<Bytes> read_binary_file(const std::string& path, std::size_t max_bytes);

}  // namespace grove
