// The command line that replays one simulation bit for bit: every field of
// SimOptions that a `grove sim` option can set, printed and parsed whole, so
// a violation's replay line, a regression-seed entry and a campaign's report
// all mean the same run.
#pragma once

#include <string>
#include <string_view>

#include "sim/simulator.h"
#include "util/result.h"

namespace grove {

// "--daemons 33 --payload 5000 ... --seed 7": every replayable option.
std::string replay_arguments(const SimOptions& options);

// The same, as a command: "grove sim <arguments> --runs 1".
std::string replay_command(const SimOptions& options);

// Parses what replay_arguments prints (an optional leading "grove sim" and a
// trailing "--runs 1" are accepted). Options not given keep SimOptions'
// defaults; an unknown option or a bad value is an error naming it.
Result<SimOptions> parse_replay_arguments(std::string_view line);

}  // namespace grove
