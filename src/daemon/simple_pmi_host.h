// The daemon's side of PMI-1 and PMI-2 (pmi/pmi_server.h decides, this
// drives): each local rank of a job offered PMI (grove run --mpi auto, pmi1
// or pmi2) gets one end of a socketpair as PMI_FD; the daemon reads the
// other. A barrier is a fence of the DVM's engine through the PMIx bridge's
// fence book (the same two trees, the same failure answers), over the job's
// ranks; its data is the ranks' puts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "daemon/pmix_bridge.h"
#include "jobs/host/job_host.h"
#include "os/fd.h"
#include "os/io_watch.h"
#include "os/timer.h"
#include "pmi/pmi_server.h"

namespace grove {

class SimplePmiHost {
 public:
  SimplePmiHost(event_base* base, DaemonRuntime& runtime, const Log& log, PmixBridge& bridge);
  ~SimplePmiHost();
  SimplePmiHost(const SimplePmiHost&) = delete;
  SimplePmiHost& operator=(const SimplePmiHost&) = delete;

  // For a rank about to start: adds its PMI environment to `extras` and
  // sets its end of the connection. Nothing for a job run with --mpi pmix.
  Status offer(const JobSpec& spec, std::uint32_t rank, RankSetup::RankExtras& extras);
  // The rank's process was reaped: what it sent before it went is read
  // first (a finalize), then an exit after PMI init without finalize
  // becomes ExitKind::left_without_finalize.
  void classify_exit(RankExit& exit);
  // The job is over here.
  void forget_job(std::uint32_t job);

  // The PMI facts of `spec` as this daemon serves them (tests check them).
  static pmi::JobFacts facts_of(const JobSpec& spec, Vpid self);

 private:
  struct Conn {
    pmi::ConnId id = 0;
    std::uint32_t job = 0;
    std::uint32_t rank = 0;
    Fd fd;
    IoWatch readable, writable;
    std::string backlog;   // replies the rank has not taken yet
    bool closing = false;  // closes once the backlog has gone
    bool dead = false;     // swept on the loop's next pass
  };
  void on_readable(pmi::ConnId id);
  void on_writable(pmi::ConnId id);
  // Reads what the rank sent, until it would block, the rank is gone, its
  // unread answers pass kMaxBacklog, or (unless `to_the_end`) one pass has
  // read kMaxReadPerPass.
  void pump(Conn& conn, bool to_the_end = false);
  static constexpr std::size_t kMaxBacklog = 1 << 20;
  static constexpr std::size_t kMaxReadPerPass = 64 * 1024;
  void send(Conn& conn, const std::string& bytes);
  void end(Conn& conn);  // the connection is over: swept later, out of its callbacks
  void drive(pmi::Outbox outbox);
  // A rank's spawn, through the controller as PMIx_Spawn's.
  void spawn(const pmi::effect::Spawn& request);
  void sweep();
  Conn* find(pmi::ConnId id);

  event_base* base_;
  DaemonRuntime& runtime_;
  const Log& log_;
  PmixBridge& bridge_;
  pmi::Server server_;
  std::map<pmi::ConnId, std::unique_ptr<Conn>> conns_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, pmi::ConnId> by_rank_;
  pmi::ConnId next_id_ = 1;
  Timer sweeper_;
};

}  // namespace grove
