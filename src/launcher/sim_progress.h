// grove sim's progress on stderr, and its Ctrl-C. Long runs (a million
// daemons take a minute) show how far they are: a bar redrawn in place on a
// terminal once the sweep has run a second (nothing when stderr is piped),
// or, with --progress always, a plain line every half second (for logs and
// tests). Ctrl-C stops the sweep: the run under way is dropped and the runs
// done are reported as usual.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace grove {

enum class ProgressMode { automatic, always, never };

std::optional<ProgressMode> parse_progress_mode(std::string_view text);

class SimProgress {
 public:
  // Catches SIGINT until destroyed.
  SimProgress(ProgressMode mode, std::uint32_t runs);
  ~SimProgress();
  SimProgress(const SimProgress&) = delete;
  SimProgress& operator=(const SimProgress&) = delete;

  // `run` (from 0) has handled `events` so far. False once Ctrl-C was
  // pressed: the caller stops.
  bool update(std::uint32_t run, std::uint64_t events);
  bool interrupted() const;

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::uint32_t run, std::uint64_t events);

  ProgressMode mode_;
  std::uint32_t runs_;
  Clock::time_point started_ = Clock::now();
  Clock::time_point drawn_{};
  bool on_terminal_ = false;
  bool bar_shown_ = false;
};

}  // namespace grove
