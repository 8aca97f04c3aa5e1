// The controller's long-running answers to the CLI, as a state machine:
// `grove status` gathers every daemon's counters (requests that arrive
// meanwhile share the gathering; it ends when every living daemon answered
// or after a deadline), and `grove bench` runs timed rounds of a release
// broadcast or a barrier one after another. Sans-IO: requesters are tokens
// the driver maps to its replies; inputs carry `now`; outputs are effects.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "daemon/control_plane/control_messages.h"
#include "util/clock.h"

namespace grove {

enum class CliTimer : std::uint8_t {
  status_deadline,  // answer with what has arrived
  bench_finish,     // answer the benchmark on the loop's next pass
};

// What a finished benchmark measured (every span in microseconds).
struct BenchSummary {
  std::string kind;
  std::uint64_t size = 0;
  std::uint64_t count = 0;
  std::uint64_t wire_bytes = 0;
  std::vector<double> spans_us;
  double min_us = 0, median_us = 0, p50_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
};
// Nearest-rank percentiles and the mean of `spans_us` (at least one).
BenchSummary summarize_bench(std::string kind, std::uint64_t size, std::uint64_t count,
                             std::uint64_t wire_bytes, std::vector<double> spans_us);

namespace cli {

// Ask every daemon for its counters (the controller's own are in already).
struct BroadcastCountersRequest {
  std::uint64_t id = 0;
  bool flight = false;  // with every daemon's flight recording
};
struct ArmTimer {
  CliTimer timer = CliTimer::status_deadline;
  std::int64_t delay_ms = 0;
};
// Every requester of one gathering gets the same answer; with a dump, the
// first asked for it, and only its answer says where the recordings went.
struct ReplyStatus {
  std::vector<std::uint64_t> requesters;
  std::map<Vpid, CountersReply> counters;
  std::string dump_dir;  // where the flight recordings go (empty: none asked for)
};
// Broadcast `size` bytes (their content drawn from `round`); tell the
// service its op id (release_started).
struct StartReleaseRound {
  std::uint64_t size = 0;
  std::uint64_t round = 0;
};
// Tell every daemon of a barrier round and contribute to it.
// A barrier round: a fence among the living daemons whose contributions add
// up to `size` bytes (0: a barrier proper).
struct StartBarrierRound {
  std::uint64_t size = 0;
  std::uint64_t round = 0;
};
struct ReplyBench {
  std::uint64_t requester = 0;
  BenchSummary summary;
};
struct ReplyError {
  std::uint64_t requester = 0;
  std::string error;
};

using Effect = std::variant<BroadcastCountersRequest, ArmTimer, ReplyStatus, StartReleaseRound,
                            StartBarrierRound, ReplyBench, ReplyError>;
using Outbox = std::vector<Effect>;

}  // namespace cli

class CliService {
 public:
  // grove status. `own`: the controller's counters; `living`: daemons up,
  // the controller included; `dump_dir`: where every daemon's flight
  // recording goes (`own` then carries the controller's).
  cli::Outbox status_requested(std::uint64_t requester, CountersReply own, std::size_t living,
                               std::string dump_dir = {});
  cli::Outbox counters_arrived(const CountersReply& reply, std::size_t living);
  // A daemon was lost: it will not answer.
  cli::Outbox daemon_lost(std::size_t living);

  // grove bench. `max_size`: rml_base_max_frame_size.
  struct Bench {
    std::string kind;  // "release" or "barrier"
    std::uint64_t size = 0;
    std::uint64_t count = 0;
  };
  cli::Outbox bench_requested(std::uint64_t requester, const Bench& bench, std::uint64_t max_size,
                              TimeNs now);
  void release_started(std::uint64_t op);
  // The controller's census of a broadcast (a release round's, or a
  // barrier's release reaching every daemon). `acks_waited`: a job's fence
  // release whose acks waited to share frames, never the benchmark's.
  cli::Outbox broadcast_done(std::uint16_t tag, std::uint64_t op, TimeNs started_ns,
                             TimeNs completed_ns, std::uint64_t wire_bytes, TimeNs now,
                             bool acks_waited = false);
  // A fence ended on the controller (a barrier round's, for its span).
  // With `round_ends_here` (Bruck fences: no release, no census) the
  // controller's own end of a barrier round starts the next one.
  cli::Outbox fence_done(const std::string& signature, TimeNs now, bool round_ends_here = false);
  cli::Outbox timer_fired(CliTimer timer);
  // The DVM stops: a running benchmark is answered with an error.
  cli::Outbox stopping();

  bool gathering() const { return status_.has_value(); }
  bool benchmarking() const { return bench_.has_value(); }

 private:
  cli::Outbox finish_status();
  cli::Outbox next_round(TimeNs now);

  struct StatusGather {
    std::uint64_t id = 0;
    std::vector<std::uint64_t> requesters;
    std::map<Vpid, CountersReply> counters;
    std::string dump_dir;
  };
  std::optional<StatusGather> status_;
  std::uint64_t next_status_ = 1;

  struct BenchRun {
    std::uint64_t requester = 0;
    Bench bench;
    TimeNs round_start_ns = 0;
    std::uint64_t op = 0;
    std::vector<double> spans_us;
    std::uint64_t wire_bytes = 0;
    bool finishing = false;  // every round done; the answer waits for the next pass
  };
  std::optional<BenchRun> bench_;
};

}  // namespace grove
