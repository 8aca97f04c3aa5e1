// Verbose output per framework. `<framework>_base_verbose` sets the level;
// each line carries the process identity and a CLOCK_MONOTONIC timestamp, so
// lines from the daemons of one host can be merged in order.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "util/line_limiter.h"
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
  // Always writes, under `framework`: what a DVM's log records at its default
  // verbosity (a job's start and end), which is not an error.
  void notice(std::string_view framework, const char* format, ...) const
      __attribute__((format(printf, 3, 4)));
  // Like error(), for what a stranger can cause (a connection that fails its
  // handshake, a refused client): at most a burst of lines of `kind` per
  // window (util/line_limiter.h); the next one written says how many were
  // left out. `kind` is one fixed name per call site, never the line's text.
  void error_limited(std::string_view kind, const char* format, ...) const
      __attribute__((format(printf, 3, 4)));
  // Writes, for each kind whose window is over, how many were left out (a
  // daemon calls it from a timer, so the count of a burst that stopped is
  // not lost).
  void flush_limited() const;

  // The line prefix: "[identity] 1234.567890 framework:".
  std::string prefix(std::string_view framework) const;

 private:
  void write_line(std::string_view framework, const char* format, va_list args) const;

  std::string identity_;
  std::map<std::string, int, std::less<>> levels_;
  std::FILE* sink_;
  // Several threads log (the transport's loops, the PMIx watchdog): the
  // limiter is held for a few instructions at a time, under a spin flag.
  mutable std::atomic_flag limiter_busy_ = ATOMIC_FLAG_INIT;
  mutable LineLimiter limiter_{5, 10'000'000'000ULL};
};

}  // namespace grove
