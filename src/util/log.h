// Verbose output per framework. `<framework>_base_verbose` sets the level;
// each line carries the process identity and a CLOCK_MONOTONIC timestamp, so
// lines from the daemons of one host can be merged in order.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "util/param_registry.h"

namespace grove {

class Log {
 public:
  // Reads every "*_base_verbose" parameter of the registry once.
  Log(std::string identity, const ParamRegistry& params, std::FILE* sink = stderr);

  void set_identity(std::string identity) { identity_ = std::move(identity); }
  const std::string& identity() const { return identity_; }

  int level(std::string_view framework) const;
  bool enabled(std::string_view framework, int level) const {
    return this->level(framework) >= level;
  }

  // Writes one line if the framework's level is at least `level`.
  void verbose(std::string_view framework, int level, const char* format, ...) const
      __attribute__((format(printf, 4, 5)));
  // Always writes (errors and notices that a user must see).
  void error(const char* format, ...) const __attribute__((format(printf, 2, 3)));

  // The line prefix: "[identity] 1234.567890 framework:".
  std::string prefix(std::string_view framework) const;

 private:
  void write_line(std::string_view framework, const char* format, va_list args) const;

  std::string identity_;
  std::map<std::string, int, std::less<>> levels_;
  std::FILE* sink_;
};

}  // namespace grove
