// The one way a test waits for something it cannot be told about: ask
// `condition` every `poll` until it holds or `timeout` has passed. Every
// wait has a deadline; what a test waits for is the condition, not a time.
#pragma once

#include <chrono>
#include <functional>

namespace grove::test {

// Asks `condition` at once, then every `poll`, until it holds (true) or
// `timeout` has passed; it is asked once more at the deadline before giving
// up (false). `condition` may do work of its own (run a command, reap a
// child); a zero `poll` leaves the pacing to it.
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                std::chrono::milliseconds poll = std::chrono::milliseconds(20));

}  // namespace grove::test
