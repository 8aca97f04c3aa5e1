// Runs a program for a test: captured stdout/stderr, extra environment, and a
// timeout after which the child (and its process group) is killed by PID.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace grove::test {

struct RunResult {
  int exit_code = -1;  // valid when !signaled
  int signal = 0;      // the terminating signal, if any
  bool timed_out = false;
  std::string out;
  std::string err;
};

struct RunOptions {
  std::vector<std::string> extra_env;  // "NAME=value", added to (or replacing in) environ
  std::vector<std::string> unset_env;  // names removed from the child's environment
  std::chrono::milliseconds timeout{30000};
  std::string stdin_text;
};

RunResult run_program(const std::vector<std::string>& argv, const RunOptions& options = {});

// The path of a built binary handed to the test by meson (an environment variable).
std::string binary_from_env(const char* variable);

// How many times `needle` occurs in `text` (overlapping occurrences too).
std::size_t count_occurrences(const std::string& text, const std::string& needle);

}  // namespace grove::test
