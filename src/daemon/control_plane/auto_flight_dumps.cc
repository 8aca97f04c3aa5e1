#include "daemon/control_plane/auto_flight_dumps.h"

namespace grove {

AutoFlightDumps::Decision AutoFlightDumps::problem_seen(Vpid where, const std::string& text,
                                                        TimeNs now) {
  using What = Decision::What;
  std::string problem = "daemon " + std::to_string(where) + ": " + text;
  if (!dumps_.empty()) {
    Dump& newest = dumps_.back();
    // One that failed holds nothing: a new problem gets a dump of its own.
    const bool failed = newest.finished && !newest.error.empty();
    if (!newest.finished || (!failed && now - newest.started_ns < kJoinWindowNs)) {
      newest.problems.push_back(std::move(problem));
      return {What::joined, newest.dir};
    }
  }
  if (dumps_.size() >= max_) {
    ++dropped_;
    return {What::dropped, {}};
  }
  Dump& dump = dumps_.emplace_back();
  dump.dir = base_dir_ + "/dump-" + std::to_string(dumps_.size());
  dump.problems.push_back(std::move(problem));
  dump.started_ns = now;
  return {What::gather, dump.dir};
}

void AutoFlightDumps::finished(std::size_t files, std::uint64_t bytes, std::string error) {
  if (dumps_.empty() || dumps_.back().finished) return;
  Dump& dump = dumps_.back();
  dump.finished = true;
  dump.files = files;
  dump.bytes = bytes;
  dump.error = std::move(error);
}

}  // namespace grove
