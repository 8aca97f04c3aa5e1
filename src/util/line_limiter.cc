#include "util/line_limiter.h"

namespace grove {

LineLimiter::Verdict LineLimiter::admit(std::string_view kind, TimeNs now) {
  auto found = kinds_.find(kind);
  if (found == kinds_.end()) found = kinds_.emplace(std::string(kind), Kind{now, 0, 0}).first;
  Kind& state = found->second;
  if (now >= state.window_start + window_ns_) {
    state.window_start = now;
    state.passed = 0;
  }
  if (state.passed >= burst_) {
    ++state.left_out;
    return Verdict{false, 0};
  }
  ++state.passed;
  Verdict verdict{true, state.left_out};
  state.left_out = 0;
  return verdict;
}

std::vector<LineLimiter::LeftOut> LineLimiter::flush(TimeNs now) {
  std::vector<LeftOut> out;
  for (auto& [kind, state] : kinds_) {
    if (state.left_out == 0 || now < state.window_start + window_ns_) continue;
    out.push_back(LeftOut{kind, state.left_out});
    state.left_out = 0;
  }
  return out;
}

}  // namespace grove
