// bench_flight_record DIR [REPEATS]: what recording costs a daemon per engine
// input, on real inputs. The flight recordings in DIR (grove status --dump)
// are replayed through fresh engines REPEATS times (default 20) without a
// recorder and with one (grpcomm_flight_recorder_size's default), the two
// alternated; the difference of their CPU time, per input, is the
// recorder's share of a daemon's work. Prints one JSON object:
//   {"inputs": N, "plain_ns_per_input": A, "recording_ns_per_input": B,
//    "recorder_ns_per_input": B - A}
// benchmarks/flight_recorder_cost.py runs it on the dump of its loads.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "daemon/flight_dump.h"
#include "grpcomm/flight_recorder.h"
#include "sim/flight_replay.h"

namespace {

using namespace grove;

double cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

// One pass over every recording; returns the CPU it took.
double pass(const std::vector<FlightRecording>& recordings, bool record, std::uint64_t& inputs) {
  const double started = cpu_ns();
  for (const FlightRecording& recording : recordings) {
    auto engine = replay_engine(recording);
    if (!engine) {
      std::fprintf(stderr, "bench_flight_record: %s\n", engine.error().message.c_str());
      std::exit(2);
    }
    FlightRecorder recorder(record ? std::size_t{4} << 20 : 0);
    recorder.start((*engine)->config(), recording.header.fresh_daemons, recording.header.seed);
    for (const FlightInput& input : recording.inputs) {
      Outbox out;
      if (!feed_recorded_input(**engine, input, out)) break;
      if (record) recorder.record(head_of(input), out);
      ++inputs;
    }
  }
  return cpu_ns() - started;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_flight_record DIR [REPEATS]\n");
    return 2;
  }
  auto recordings = read_flight_dump(argv[1]);
  if (!recordings) {
    std::fprintf(stderr, "bench_flight_record: %s\n", recordings.error().message.c_str());
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  std::vector<double> plain, recording;
  std::uint64_t inputs = 0;
  for (int i = 0; i < repeats; ++i) {
    std::uint64_t counted = 0;
    plain.push_back(pass(*recordings, false, counted));
    recording.push_back(pass(*recordings, true, counted));
    inputs = counted / 2;
  }
  std::sort(plain.begin(), plain.end());
  std::sort(recording.begin(), recording.end());
  const double a = plain[plain.size() / 2] / static_cast<double>(inputs);
  const double b = recording[recording.size() / 2] / static_cast<double>(inputs);
  nlohmann::json out = {{"inputs", inputs},
                        {"plain_ns_per_input", a},
                        {"recording_ns_per_input", b},
                        {"recorder_ns_per_input", b - a}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
