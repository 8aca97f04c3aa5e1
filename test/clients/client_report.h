// How the test clients report (test/clients/*_client.cc): each passed check
// prints "rank R: <what> ok" on stdout; a failed one prints "rank R: <why>"
// on stderr and exits with status 1. `self` is the client's own name, filled
// by PMIx_Init.
#pragma once

#include <pmix.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace test_client {

inline pmix_proc_t self;

[[noreturn]] inline void fail(const char* format, ...) __attribute__((format(printf, 1, 2)));

inline void fail(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(stderr, "rank %u: ", self.rank);
  std::vfprintf(stderr, format, args);
  std::fprintf(stderr, "\n");
  va_end(args);
  std::fflush(stdout);
  std::exit(1);
}

// "PREFIXrank R: WHAT ok" (a prefix such as "child " tells two jobs apart).
inline void ok(const char* prefix, const char* what) {
  std::printf("%srank %u: %s ok\n", prefix, self.rank, what);
  std::fflush(stdout);
}

inline void ok(const char* what) {
  ok("", what);
}

inline std::string nspace_of(const pmix_proc_t& proc) {
  return std::string(proc.nspace, ::strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

}  // namespace test_client
