// The part of a daemon that hosts ranks, the same in the controller and in
// groved: the JobHost that forks them, the PmixBridge and the SimplePmiHost
// (PMI-1, PMI-2) that serve them,
// wired to each other once here. Only where the ranks' reports go differs:
// the controller hands them to its job table, groved sends them to the
// controller.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>

#include "daemon/daemon_runtime.h"
#include "daemon/pmix_bridge.h"
#include "daemon/simple_pmi_host.h"
#include "jobs/host/job_host.h"
#include "os/event_loop.h"
#include "util/log.h"
#include "util/param_registry.h"

namespace grove {

struct RankReports {
  std::function<void(const JobOutput&)> output;
  // Classified by the PMIx side first (left_without_finalize, the fence
  // rounds the rank took part in).
  std::function<void(const RankExit&)> exit;
  std::function<void(const RanksStarted&)> started;
};

class RankHost {
 public:
  // `daemon_dir`: this daemon's session directory (job-N and pmix/ go there).
  // `topology`: this host's (HostTopology), outliving the RankHost.
  static Result<std::unique_ptr<RankHost>> create(event_base* base, DaemonRuntime& runtime,
                                                  const Log& log, const ParamRegistry& params,
                                                  Vpid self, const std::string& daemon_dir,
                                                  hwloc_topology* topology, RankReports reports);
  ~RankHost();
  RankHost(const RankHost&) = delete;
  RankHost& operator=(const RankHost&) = delete;

  // It owns the job broadcasts (launch, kill, cleanup, signal, ranks gone),
  // PMIx events, the controller's output acknowledgements and input, and the
  // PMIx bridge's control frames: the runtime routes them here.
  bool on_broadcast(std::uint16_t tag, std::span<const std::byte> payload);
  bool on_control(Vpid from, std::uint16_t tag, const Bytes& payload);
  void on_output_ack(const OutputAck& ack);
  // grove run's input for the reading ranks here; `ack` once they have it.
  void on_stdin(const JobStdin& input, std::function<void(const StdinAck&)> ack);
  // On SIGCHLD.
  void reap();
  // Kills every rank hosted here now (an orderly stop of the DVM).
  void end_ranks();
  // The hand-overs between libpmix's thread and the loop so far.
  PmixHops pmix_hops() const;

 private:
  RankHost() = default;

  DaemonRuntime* runtime_ = nullptr;
  std::unique_ptr<RankSetup> setup_;   // answers the JobHost from the PMIx bridge
  std::unique_ptr<JobHost> job_host_;  // null once end_ranks has run
  std::unique_ptr<PmixBridge> pmix_;
  std::unique_ptr<SimplePmiHost> pmi_;  // PMI-1 and PMI-2, beside PMIx; before pmix_ goes
  TagClaim control_tags_, broadcast_tags_;
};

// What a daemon's loop and its ranks' PMIx server have woken for so far.
WakeCounts wake_counts(const EventLoop& loop, const RankHost* ranks);

}  // namespace grove
