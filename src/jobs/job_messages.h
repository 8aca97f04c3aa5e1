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
#include "util/wire.h"

namespace grove {

// Each message below lists its fields once (wire_fields); util/wire.h derives
// `encode(message)` and `wire_decode<Message>(payload)` from that list.

// One program of a job and its ranks. A job runs one (`grove run`) or several
// (MPI_Comm_spawn_multiple); app k's ranks follow app k-1's.
struct JobApp {
  std::vector<std::string> argv;  // program and arguments
  std::vector<std::string> env;   // NAME=value added after the job's
  std::string cwd;                // empty: the daemon's
  std::uint32_t np = 1;

  static constexpr const char* wire_name = "job app";
  static auto wire_fields(auto& m) { return std::tie(m.argv, m.env, m.cwd, m.np); }
};

struct JobSpec {
  std::uint32_t job = 0;
  std::string nspace;
  std::vector<std::string> env;  // NAME=value added for every rank
  bool env_replaces = false;     // env is the whole environment, not added to the daemon's
  std::vector<JobApp> apps;      // at least one; their np add up to ranks.size()
  std::vector<RankPlacement> ranks;
  std::vector<std::string> hostnames;  // by node id
  // By node id: that node's slots (a node with more ranks is oversubscribed,
  // and its ranks are told so); empty: not known, none is.
  std::vector<std::uint32_t> node_slots;
  std::string map_by;  // the mapping policy, as `--map-by` reads it (PMIX_MAPBY)
  // The rank that spawned this job (PMIx_Spawn; PMIX_PARENT_ID); empty
  // nspace: started by `grove run`.
  std::string parent_nspace;
  std::uint32_t parent_rank = 0;
  // Which ranks read grove run's stdin (the rest read /dev/null): a rank,
  // or kStdinNone, kStdinAll.
  std::int64_t stdin_rank = kStdinNone;
  static constexpr std::int64_t kStdinNone = -1, kStdinAll = -2;
  // --bind-to: none, core, hwthread or socket; --report-bindings.
  std::string bind_to = "none";
  bool report_bindings = false;
  // bind_to is mpirun's default, not asked for: a host that cannot bind so
  // runs the rank unbound instead of failing it.
  bool bind_by_default = false;
  // The membership epoch the job was placed in: a daemon that came back or
  // joined after it hosts none of its ranks (its fences count it lost,
  // FenceRequest::placed_epoch). UINT64_MAX: not stated.
  std::uint64_t placed_epoch = UINT64_MAX;
  // What the ranks are offered to start with (grove run --mpi): "auto"
  // (PMIx and PMI-1/PMI-2 at once), "pmix", "pmi1" or "pmi2".
  std::string mpi = "auto";
  // KEY=VALUE pairs the spawning rank put for this job's PMI ranks (MPICH's
  // PARENT_ROOT_PORT_NAME): in the job's PMI key-value store from the start.
  std::vector<std::string> pmi_preput;

  static constexpr const char* wire_name = "job launch";
  static auto wire_fields(auto& m) {
    return std::tie(m.job, m.nspace, m.env, m.env_replaces, m.apps, m.ranks, m.hostnames,
                    m.node_slots, m.map_by, m.parent_nspace, m.parent_rank, m.stdin_rank, m.bind_to,
                    m.report_bindings, m.bind_by_default, m.placed_epoch, m.mpi, m.pmi_preput);
  }
  // auto, pmix, pmi1 or pmi2 (--mpi).
  static bool valid_mpi(const std::string& text) {
    return text == "auto" || text == "pmix" || text == "pmi1" || text == "pmi2";
  }
  // none, core, hwthread or socket (--bind-to).
  static bool valid_bind_to(const std::string& text) {
    return text == "none" || text == "core" || text == "hwthread" || text == "socket";
  }
  // Whether `rank` reads the job's stdin.
  bool reads_stdin(std::uint32_t rank) const {
    return stdin_rank == kStdinAll || stdin_rank == static_cast<std::int64_t>(rank);
  }
  // The app rank `rank` runs (rank < ranks.size()).
  std::uint32_t app_of(std::uint32_t rank) const;
  // Whether the host of node `node_id` holds more of this job's ranks than
  // its slots (daemons sharing a host name share its slots).
  bool node_oversubscribed(std::uint32_t node_id) const;
  // Cores each rank is given (map_by's :pe=K; 1 without it).
  std::uint32_t cores_per_rank() const;
  // Programs to run, one rank per app rank, and rank i at index i.
  bool wire_valid() const;
};

enum class OutputStream : std::uint8_t { out = 1, err = 2 };
template <>
struct WireEnum<OutputStream> {
  static constexpr OutputStream first = OutputStream::out, last = OutputStream::err;
};

struct JobOutput {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  OutputStream stream = OutputStream::out;
  std::string text;  // one or more whole lines
  // When the hosting daemon read it: microseconds since the Unix epoch, its
  // wall clock (--timestamp-output).
  std::int64_t read_at_us = 0;

  static constexpr const char* wire_name = "job output";
  static auto wire_fields(auto& m) {
    return std::tie(m.job, m.rank, m.stream, m.text, m.read_at_us);
  }
};

enum class ExitKind : std::uint8_t {
  exited = 1,        // status is the exit code
  signaled = 2,      // status is the signal
  failed_start = 3,  // message says why (exec failed, no such program)
  // Exited (status is the exit code) after PMIx_Init, without PMIx_Finalize:
  // its peers may be waiting for it in a fence that can never complete.
  left_without_finalize = 4,
};
template <>
struct WireEnum<ExitKind> {
  static constexpr ExitKind first = ExitKind::exited, last = ExitKind::left_without_finalize;
};

// The last round of a fence signature released on a daemon.
struct FenceRound {
  std::string signature;
  std::uint64_t round = 0;
  bool operator==(const FenceRound&) const = default;

  static constexpr const char* wire_name = "fence round";
  static auto wire_fields(auto& m) { return std::tie(m.signature, m.round); }
};

struct RankExit {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  ExitKind kind = ExitKind::exited;
  std::int32_t status = 0;
  // failed_start: why. left_without_finalize: the call it did not make
  // (empty: PMIx_Finalize; PMI_Finalize for a PMI rank).
  std::string message;
  // The job's fence rounds released on the rank's daemon when it exited: the
  // rank took part in none after them.
  std::vector<FenceRound> released;

  static constexpr const char* wire_name = "rank exit";
  static auto wire_fields(auto& m) {
    return std::tie(m.job, m.rank, m.kind, m.status, m.message, m.released);
  }
};

// Bytes of a job's output the controller has handed to `grove run` (or
// dropped, its reader gone): the hosting daemon may read that much more.
struct OutputAck {
  std::uint32_t job = 0;
  std::uint64_t bytes = 0;

  static constexpr const char* wire_name = "output ack";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.bytes); }
};

// Ranks of a job whose program a daemon has exec'd: `grove ps` counts a rank
// as running from this report until its exit, not from the launch on.
struct RanksStarted {
  std::uint32_t job = 0;
  std::vector<std::uint32_t> ranks;

  static constexpr const char* wire_name = "ranks started";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.ranks); }
};

// Ranks of a job that exited cleanly while others run: a fence that includes
// one of them can never complete.
struct GoneRank {
  std::uint32_t rank = 0;
  std::vector<FenceRound> released;  // as in RankExit
  bool operator==(const GoneRank&) const = default;

  static constexpr const char* wire_name = "gone rank";
  static auto wire_fields(auto& m) { return std::tie(m.rank, m.released); }
};
struct RanksGone {
  std::uint32_t job = 0;
  std::vector<GoneRank> ranks;

  static constexpr const char* wire_name = "ranks gone";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.ranks); }
};

struct JobAbort {
  std::uint32_t job = 0;
  std::uint32_t rank = 0;
  std::int32_t status = 0;
  std::string message;
  std::string call = "PMIx_Abort";  // what the rank called (PMI_Abort, PMI2_Abort)

  static constexpr const char* wire_name = "abort";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.rank, m.status, m.message, m.call); }
};

// A PMIx server asks the daemon hosting a rank for the data the rank put
// (direct modex); the answer names the request by the asker's handle.
struct ModexRequest {
  std::uint64_t handle = 0;
  std::string nspace;
  std::uint32_t rank = 0;

  static constexpr const char* wire_name = "modex request";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.nspace, m.rank); }
};
struct ModexReply {
  std::uint64_t handle = 0;
  std::int32_t status = 0;  // a pmix_status_t
  Bytes blob;

  static constexpr const char* wire_name = "modex reply";
  static auto wire_fields(auto& m) { return std::tie(m.handle, m.status, m.blob); }
};

// The kill and cleanup broadcasts: which job.
struct JobRef {
  std::uint32_t job = 0;

  static constexpr const char* wire_name = "job reference";
  static auto wire_fields(auto& m) { return std::tie(m.job); }
};

// grove run's input for the job's reading ranks on one daemon, in order
// (`seq` counts from 1); `eof`: no more comes, their stdin closes once written.
struct JobStdin {
  std::uint32_t job = 0;
  std::uint64_t seq = 0;
  std::string data;
  bool eof = false;

  static constexpr const char* wire_name = "job stdin";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.seq, m.data, m.eof); }
};
// The daemon wrote chunk `seq` into its reading ranks' pipes; `open`: at
// least one of them still reads (false: all closed their stdin or ended).
struct StdinAck {
  std::uint32_t job = 0;
  std::uint64_t seq = 0;
  bool open = false;

  static constexpr const char* wire_name = "stdin ack";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.seq, m.open); }
};

// A signal for every running rank of a job (`grove kill --signal`); the job
// goes on unless its ranks end of it.
struct JobSignal {
  std::uint32_t job = 0;
  std::int32_t signal = 0;

  static constexpr const char* wire_name = "job signal";
  static auto wire_fields(auto& m) { return std::tie(m.job, m.signal); }
  bool wire_valid() const { return signal > 0 && signal <= kMaxSignal; }
  static constexpr std::int32_t kMaxSignal = 64;  // SIGRTMAX on Linux
};

}  // namespace grove
