// How many lines of one kind a log lets through. Where a stranger can cause a
// line (a connection that fails its handshake, a refused PMIx client, a
// failed accept), a loop of them must not fill the disk: 22,500 connections
// once wrote 8.4 MB of log. Per kind, `burst` lines per `window` pass; the
// rest are counted, and the next line that passes (or a flush once the
// window is over) says how many were left out. Pure: the time is handed in.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.h"

namespace grove {

class LineLimiter {
 public:
  LineLimiter(std::uint32_t burst, TimeNs window_ns) : burst_(burst), window_ns_(window_ns) {}

  struct Verdict {
    bool pass = false;
    // With a line that passes: how many of its kind were left out before it.
    std::uint64_t left_out = 0;
  };
  Verdict admit(std::string_view kind, TimeNs now);

  struct LeftOut {
    std::string kind;
    std::uint64_t count = 0;
  };
  // The kinds whose window is over with lines left out (counted once).
  std::vector<LeftOut> flush(TimeNs now);

 private:
  struct Kind {
    TimeNs window_start = 0;
    std::uint32_t passed = 0;
    std::uint64_t left_out = 0;
  };
  std::uint32_t burst_;
  TimeNs window_ns_;
  std::map<std::string, Kind, std::less<>> kinds_;
};

}  // namespace grove
