// Signals by name, as kill(1) and scancel spell them: "TERM", "SIGUSR1",
// "usr1" or a number.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"

namespace grove {

// The signal a user named; an Error names what was given and what is accepted.
Result<int> parse_signal(std::string_view text);
// "USR1" for SIGUSR1; the number for a signal without a name.
std::string signal_name(int signal);

}  // namespace grove
