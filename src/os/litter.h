// What a process leaves behind when it is killed before it can tidy up
// (SIGKILL, a crash, a lost node): directories and files named after its
// pid. The next process of the same kind removes them, and only what is
// provably such litter: named `prefix` then a pid whose process has ended,
// of the expected kind (never through a symbolic link), and this user's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace grove {

enum class LitterKind {
  directory,   // removed with everything in it
  empty_file,  // a regular file with nothing in it (a log nobody wrote to)
};

// Removes each entry of `directory` named `prefix` + PID (then nothing, or
// anything that does not start with a digit) as above; returns how many
// went.
std::size_t remove_litter_of_ended(const std::string& directory, std::string_view prefix,
                                   LitterKind kind);

}  // namespace grove
