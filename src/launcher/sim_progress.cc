#include "launcher/sim_progress.h"

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

namespace grove {
namespace {

volatile std::sig_atomic_t interrupt_requested = 0;
struct sigaction previous_action {};

void on_interrupt(int) {
  interrupt_requested = 1;
}

constexpr auto kFirstBarAfter = std::chrono::seconds(1);
constexpr auto kBarInterval = std::chrono::milliseconds(100);
constexpr auto kLineInterval = std::chrono::milliseconds(500);
constexpr int kBarWidth = 30;

}  // namespace

std::optional<ProgressMode> parse_progress_mode(std::string_view text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "always") return ProgressMode::always;
  if (text == "never") return ProgressMode::never;
  return std::nullopt;
}

SimProgress::SimProgress(ProgressMode mode, std::uint32_t runs) : mode_(mode), runs_(runs) {
  on_terminal_ = mode == ProgressMode::automatic && isatty(STDERR_FILENO) == 1;
  interrupt_requested = 0;
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous_action);
}

SimProgress::~SimProgress() {
  sigaction(SIGINT, &previous_action, nullptr);
  if (bar_shown_) std::fprintf(stderr, "\r\033[K");
}

bool SimProgress::interrupted() const {
  return interrupt_requested != 0;
}

bool SimProgress::update(std::uint32_t run, std::uint64_t events) {
  if (interrupted()) return false;
  const Clock::time_point now = Clock::now();
  if (mode_ == ProgressMode::always) {
    if (drawn_ == Clock::time_point{} || now - drawn_ >= kLineInterval) {
      drawn_ = now;
      std::fprintf(stderr, "grove sim: run %u/%u, %llu events\n", run + 1, runs_,
                   static_cast<unsigned long long>(events));
    }
  } else if (on_terminal_ && now - started_ >= kFirstBarAfter && now - drawn_ >= kBarInterval) {
    drawn_ = now;
    draw(run, events);
  }
  return true;
}

void SimProgress::draw(std::uint32_t run, std::uint64_t events) {
  const int filled =
      static_cast<int>(static_cast<std::uint64_t>(run) * kBarWidth / (runs_ == 0 ? 1 : runs_));
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.resize(kBarWidth, '.');
  std::fprintf(stderr, "\r\033[K[%s] run %u/%u, %llu events (Ctrl-C reports the runs done)",
               bar.c_str(), run + 1, runs_, static_cast<unsigned long long>(events));
  std::fflush(stderr);
  bar_shown_ = true;
}

}  // namespace grove
