// The requests the CLI sends the controller over the control socket, as
// types. The socket's JSON is decoded here, once: every field is checked for
// type and range and a bad request is an Error naming the field, so the
// controller only ever sees well-formed values.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "jobs/job_request.h"
#include "util/result.h"

namespace grove {

struct StopRequest {};
// With dump_dir (absolute): every daemon's flight recording is written there.
struct StatusRequest {
  std::string dump_dir;
};

// Ends a job, or with a signal only sends it to the job's ranks.
struct KillRequest {
  std::uint32_t job = 0;
  int signal = 0;            // 0: end the job
  bool interrupted = false;  // Ctrl-C on `grove run` (status 130), not `grove kill`
};

// The running and recently ended jobs (`grove ps`).
struct JobsRequest {};

// A chunk of grove run's stdin for its job's reading ranks; answered once
// they have it ("open": whether any still reads).
struct StdinRequest {
  std::uint32_t job = 0;
  std::string data;  // bytes (base64 on the socket)
  bool eof = false;
};

struct BenchRequest {
  std::string kind;  // "release" or "barrier"
  std::uint64_t size = 33;
  std::uint64_t count = 10;
};

// A job to map and launch (what `grove run` asks).
using RunRequest = JobRequest;

// `grove shrink`: these daemons (by host, by vpid, or both) leave the DVM;
// refused while they host ranks unless `force` ends those jobs first.
struct ShrinkRequest {
  std::vector<std::string> hosts;
  std::vector<std::uint32_t> daemons;
  bool force = false;
};

// A host `grove grow --host/--hostfile` names, as its host list wrote it.
struct GrowHost {
  std::string name;
  std::string user;         // empty: ssh's default
  std::uint32_t slots = 0;  // 0: its cores, as its daemon reports them
};

// `grove grow`: K more daemons on the controller's host (--local K), a
// daemon on each named host (started over ssh), or, inside a Slurm
// allocation, on its nodes the DVM does not use yet (--activate, all of them
// or the `nodes` named; one srun step). Each takes the next vpid and joins in
// an epoch of its own; a host whose daemon was lost or removed gets one back
// at its old vpid (a return). Exactly one of the three is given.
struct GrowRequest {
  std::uint32_t local = 0;
  std::vector<GrowHost> hosts;
  bool activate = false;
  std::vector<std::string> nodes;  // with activate; empty: every unused node
};
inline constexpr std::uint32_t kMaxGrowLocal = 256;
inline constexpr std::size_t kMaxGrowHosts = 256;

using ControlRequest =
    std::variant<StopRequest, StatusRequest, KillRequest, JobsRequest, StdinRequest, BenchRequest,
                 RunRequest, ShrinkRequest, GrowRequest>;

// Limits a request may not exceed (a request is one line of at most
// kMaxControlLine bytes; these bound what it can make the controller do).
// kMaxRanksPerJob and kMaxHostChoices: jobs/job_request.h.
inline constexpr std::uint64_t kMaxBenchCount = 1'000'000;
inline constexpr std::uint32_t kMaxJobTimeoutS = 366u * 24 * 3600;
inline constexpr std::size_t kMaxControlLine = 1u << 20;
inline constexpr std::size_t kMaxStdinChunk = 64u << 10;  // bytes of one StdinRequest

Result<ControlRequest> decode_control_request(const nlohmann::json& request);
// One line of text as a JSON object: refused if malformed, over the limit,
// or with a key repeated in any object (JSON leaves that to the reader).
Result<nlohmann::json> parse_control_json(std::string_view line);
// The same from one line of text (what the socket reads).
Result<ControlRequest> parse_control_request(std::string_view line);

}  // namespace grove
