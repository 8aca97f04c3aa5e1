// Small reads of /proc (and of any directory or short file): a directory's
// entry names and a whole file's text, with nothing on failure.
#pragma once

#include <string>
#include <vector>

namespace grove {

// The names in `path` but "." and ".." (and other dot names); empty if it
// cannot be read.
std::vector<std::string> directory_entries(const std::string& path);

// The whole file; empty if it cannot be read.
std::string read_whole_file(const std::string& path);

}  // namespace grove
