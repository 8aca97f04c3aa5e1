// Messages about jobs. The launch, kill and cleanup travel as engine
// broadcasts on the routing tree (the launch on its own tag, so it can be
// treated apart from releases); output, exits and aborts are control frames
// from the hosting daemon to the controller.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "grpcomm/tags.h"
#include "jobs/job_map.h"
#include "util/bytes.h"
#include "util/result.h"

namespace grove {

struct JobSpec {
  std::uint32_t job = 0;
  std::string nspace;
  std::vector<std::string> argv;  // program and arguments
  std::vector<std::string> env;   // NAME=value added for every rank
  std::string cwd;
  std::vector<RankPlacement> ranks;
  std::vector<std::string> hostnames;  // by node id
};

enum class OutputStream : std::uint8_t { out = 1, err = 2 };

struct JobOutput {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  OutputStream stream = OutputStream::out;
  std::string text;  // one or more whole lines
};

enum class ExitKind : std::uint8_t {
  exited = 1,        // status is the exit code
  signaled = 2,      // status is the signal
  failed_start = 3,  // message says why (exec failed, no such program)
  // Exited (status is the exit code) after PMIx_Init, without PMIx_Finalize:
  // its peers may be waiting for it in a fence that can never complete.
  left_without_finalize = 4,
};

// The last round of a fence signature released on a daemon.
struct FenceRound {
  std::string signature;
  std::uint64_t round = 0;
  bool operator==(const FenceRound&) const = default;
};

struct RankExit {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  ExitKind kind = ExitKind::exited;
  std::int32_t status = 0;
  std::string message;
  // The job's fence rounds released on the rank's daemon when it exited: the
  // rank took part in none after them.
  std::vector<FenceRound> released;
};

// Bytes of a job's output the controller has handed to `grove run` (or
// dropped, its reader gone): the hosting daemon may read that much more.
struct OutputAck {
  std::uint32_t job = 0;
  std::uint64_t bytes = 0;
};

// Ranks of a job that exited cleanly while others run: a fence that includes
// one of them can never complete.
struct GoneRank {
  std::uint32_t rank = 0;
  std::vector<FenceRound> released;  // as in RankExit
  bool operator==(const GoneRank&) const = default;
};
struct RanksGone {
  std::uint32_t job = 0;
  std::vector<GoneRank> ranks;
};

struct JobAbort {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  std::int32_t status = 0;
  std::string message;
};

Bytes encode(const JobSpec& spec);
Bytes encode(const JobOutput& output);
Bytes encode(const RankExit& exit);
Bytes encode(const JobAbort& abort);
Bytes encode(const OutputAck& ack);
Bytes encode(const RanksGone& gone);

Result<JobSpec> decode_job_spec(std::span<const std::byte> payload);
Result<JobOutput> decode_job_output(std::span<const std::byte> payload);
Result<RankExit> decode_rank_exit(std::span<const std::byte> payload);
Result<JobAbort> decode_job_abort(std::span<const std::byte> payload);
Result<OutputAck> decode_output_ack(std::span<const std::byte> payload);
Result<RanksGone> decode_ranks_gone(std::span<const std::byte> payload);

}  // namespace grove
