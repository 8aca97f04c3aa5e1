#include "util/signal_names.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace grove {

std::string signal_name(int signal) {
  const char* abbreviation = signal > 0 && signal < NSIG ? sigabbrev_np(signal) : nullptr;
  return abbreviation != nullptr ? abbreviation : std::to_string(signal);
}

Result<int> parse_signal(std::string_view text) {
  const Error bad{"unknown signal '" + std::string(text) +
                  "': expected a name such as TERM, INT, KILL, USR1, HUP or a number from 1 to " +
                  std::to_string(SIGRTMAX)};
  int number = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (!text.empty() && error == std::errc() && end == text.data() + text.size()) {
    if (number < 1 || number > SIGRTMAX) return bad;
    return number;
  }
  std::string name(text);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  for (int signal = 1; signal < SIGRTMIN; ++signal) {
    const char* abbreviation = sigabbrev_np(signal);
    if (abbreviation != nullptr && name == abbreviation) return signal;
  }
  return bad;
}

}  // namespace grove
