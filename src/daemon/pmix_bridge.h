// The glue between a daemon's PMIx server and the rest of the daemon: jobs
// are registered with PMIx before their ranks are forked; a PMIx fence
// becomes an engine fence over the daemons hosting its participants and its
// release goes back to PMIx as the concatenation of every daemon's blob;
// direct-modex requests travel to the daemon hosting the rank; aborts go to
// the controller. Controller and groved both use it.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>

#include "daemon/control_plane/pmix_collectives.h"
#include "daemon/control_plane/pmix_fences.h"
#include "daemon/daemon_runtime.h"
#include "jobs/host/job_directories.h"
#include "jobs/job_messages.h"
#include "os/timer.h"
#include "pmix/server.h"

namespace grove {

class PmixBridge {
 public:
  // `directories()`: the directories this daemon keeps for its jobs (null
  // once ranks can no longer start). `verify_clients`: pmix_verify_clients;
  // `handshake_timeout_ms`: pmix_handshake_timeout_ms; `call_timeout_ms`:
  // pmix_call_timeout_ms.
  // `topology`: this host's, for libpmix to share (outlives the bridge).
  using DirectoriesFn = std::function<const JobDirectories*()>;
  static Result<std::unique_ptr<PmixBridge>> create(event_base* base, DaemonRuntime& runtime,
                                                    const Log& log, const std::string& tmpdir,
                                                    DirectoriesFn directories, bool verify_clients,
                                                    std::int64_t handshake_timeout_ms,
                                                    std::int64_t call_timeout_ms,
                                                    hwloc_topology* topology);
  ~PmixBridge();

  // For JobHost: registers the job (once) and these ranks with PMIx; `done`
  // runs later on the loop with the ranks that cannot start, and why.
  using RankFailures = std::map<std::uint32_t, std::string>;
  using PreparedFn = std::function<void(RankFailures failed)>;
  void prepare_ranks(const JobSpec& spec, const std::vector<std::uint32_t>& ranks, PreparedFn done);
  // For JobHost: the PMIx (and Open MPI) environment of one local rank,
  // prepared before.
  Result<std::vector<std::string>> rank_env(const JobSpec& spec, std::uint32_t rank);
  // For JobHost: the rank's process, forked and not yet exec'd; only it (or
  // its descendants) may connect as that rank.
  void rank_started(const JobSpec& spec, std::uint32_t rank, pid_t pid);
  // The rank's process was waited for: its pid is no longer the rank's.
  void rank_reaped(std::uint32_t job, std::uint32_t rank);
  // Those of these ranks whose PMIx handshake waits for the server's answer;
  // nothing when that cannot be known (clients not verified).
  std::set<pid_t> handshakes_pending(const std::vector<pid_t>& ranks);
  PmixHops hops() const { return server_ ? server_->hops() : PmixHops{}; }
  // Control frames with pmix_tags; returns false for other tags.
  bool on_control(Vpid from, std::uint16_t tag, const Bytes& payload);
  // Broadcasts for the PMIx side of jobs (job_tags::ranks_gone); false for
  // other tags.
  bool on_broadcast(std::uint16_t tag, std::span<const std::byte> payload);
  // Where PMIx_Log's stdout and stderr lines go: the rank's own output.
  using LogOutputFn =
      std::function<bool(std::uint32_t job, std::uint32_t rank, OutputStream, std::string)>;
  void set_log_output(LogOutputFn log_output) { log_output_ = std::move(log_output); }
  // A job launched on the DVM, whether or not it has ranks here: a rank of
  // another job may connect to it (PMIx_Connect) or ask for its data.
  void note_job(const JobSpec& spec);
  // The job ended: its PMIx registration (if it had ranks here) and the
  // engine's record of its fences go.
  void forget_job(std::uint32_t job, const std::string& nspace);
  // A fence over every rank of job `nspace` for another front end (PMI's
  // barriers, daemon/simple_pmi_host.h): `data` is this daemon's part;
  // `done` runs once, with how it ended and, released, every other daemon's
  // data concatenated.
  using JobFenceDone = std::function<void(pmix_fence::Outcome, Bytes others)>;
  void fence_job(const std::string& nspace, Bytes data, JobFenceDone done);
  // A spawn for another front end (a PMI rank's): forwarded to the
  // controller as PMIx_Spawn's are; `done` runs once, with the new job's
  // nspace or why it did not start.
  using SpawnDone = std::function<void(bool started, const std::string& nspace_or_why)>;
  void spawn_job(SpawnMessage message, SpawnDone done);
  // A local rank's exit, as the controller should hear it: an exit after
  // PMIx_Init without PMIx_Finalize becomes ExitKind::left_without_finalize.
  void classify_exit(RankExit& exit);

 private:
  PmixBridge(DaemonRuntime& runtime, const Log& log, DirectoriesFn directories);
  // pmix_bridge_requests.cc: every request and notice of the PMIx server.
  void on_request(PmixRequest request);
  void on_notify(PmixEvent event);
  void log_handshake_cut(const HandshakeCut& cut) const;
  void on_fence(PmixFenceCall call);
  // pmix_bridge_connect.cc: PMIx_Connect, PMIx_Disconnect and process
  // groups.
  // (control_plane/pmix_collectives.h decides; this drives.)
  struct CollectiveWaiter;
  void on_connect(PmixConnectCall call);
  void on_group(PmixGroupCall call);
  void begin_collective(PmixCollectiveBook::Call call,
                        const std::map<std::string, std::vector<std::uint32_t>>& procs,
                        CollectiveWaiter waiter);
  void drive(pmix_collective::Outbox outbox);
  void finish_collective(std::uint64_t id, int status, std::optional<std::uint64_t> context_id);
  // Registers the jobs taking part in a connect or group that completed,
  // then answers it.
  void register_participants(const pmix_collective::RegisterThenAnswer& registering);
  // A rank declined a group invitation: its leader's PMIx_Group_invite will
  // never return (libpmix 4.2), which the log says where it can be found.
  void log_declined_invitation(const PmixEvent& event) const;
  // pmix_bridge_services.cc: PMIx_Query_info and PMIx_Log.
  void on_query(PmixQueryCall call);
  void on_log(PmixLogCall call);
  // Registers `spec` with PMIx if it is not yet (with no local ranks when it
  // has none here); `done` runs at once if it is, else once PMIx answers.
  void ensure_registered(const JobSpec& spec, std::function<void(Status)> done);
  PmixJob pmix_job(const JobSpec& spec, const JobDirectories& directories) const;
  void on_direct_modex(PmixDirectModexCall call);
  void on_abort(const std::string& nspace, std::uint32_t rank, int status,
                const std::string& message);
  const JobSpec* job_by_nspace(const std::string& nspace) const;
  // A request forwarded to the controller, by the handle its reply echoes.
  template <typename Answer>
  struct Forwarded {
    std::string nspace;  // the asking job's
    Answer answer;
  };
  template <typename Answer>
  using ForwardedMap = std::map<std::uint64_t, Forwarded<Answer>>;
  template <typename Message, typename Answer>
  void forward(std::uint16_t tag, Message message, Answer answer, ForwardedMap<Answer>& pending) {
    message.handle = awaiting_.next_handle++;
    pending.emplace(message.handle, Forwarded<Answer>{message.nspace, std::move(answer)});
    runtime_.send_control(kControllerVpid, tag, encode(message));
  }
  template <typename Answer>
  static std::optional<Answer> take_forwarded(ForwardedMap<Answer>& pending, std::uint64_t handle) {
    auto found = pending.find(handle);
    if (found == pending.end()) return std::nullopt;  // answered already (its job ended)
    std::optional<Answer> answer(std::move(found->second.answer));
    pending.erase(found);
    return answer;
  }
  template <typename Answer>
  static void forget_forwarded(ForwardedMap<Answer>& pending, const std::string& nspace,
                               int status) {
    for (auto entry = pending.begin(); entry != pending.end();) {
      if (entry->second.nspace != nspace) {
        ++entry;
        continue;
      }
      entry->second.answer.fail(status);
      entry = pending.erase(entry);
    }
  }
  // Whether an event relayed from another daemon concerns a rank of this one
  // (any event not limited to custom targets does).
  bool targets_here(const PmixEvent& event) const;

  DaemonRuntime& runtime_;
  const Log& log_;
  DirectoriesFn directories_;
  std::unique_ptr<PmixServer> server_;
  hwloc_topology* topology_ = nullptr;     // this host's (--bind-to)
  std::map<std::uint32_t, JobSpec> jobs_;  // jobs registered here
  // Jobs whose registration PMIx has not answered yet: who waits for it.
  std::map<std::uint32_t, std::vector<std::function<void(Status)>>> registering_;
  // Of those, the jobs that ended meanwhile: deregistered once answered.
  std::set<std::uint32_t> ended_while_registering_;
  std::map<std::string, std::uint32_t> by_nspace_;
  std::map<std::string, JobSpec> launched_;  // every running job of the DVM, by nspace
  LogOutputFn log_output_;
  // The libpmix answer of each connect, disconnect or group operation this
  // daemon contributed to, by the collective book's id.
  struct CollectiveWaiter {
    PmixAnswer<> connect_answer;                            // a connect or disconnect
    PmixAnswer<std::optional<std::uint64_t>> group_answer;  // a group operation
    bool group = false;                                     // answered through group_answer
  };
  PmixCollectiveBook collectives_;
  std::map<std::uint64_t, CollectiveWaiter> collective_waiters_;
  // Local ranks that connected and have not finalized, by (job, rank).
  std::set<std::pair<std::uint32_t, std::uint32_t>> unfinalized_;
  // PMIx fences (control_plane/pmix_fences.h decides; this drives): the
  // libpmix answer and PMIX_TIMEOUT timer of each unanswered fence, by the
  // book's id.
  void drive(pmix_fence::Outbox outbox);
  struct FenceWaiter {
    PmixAnswer<Bytes> answer;
    Timer timeout;
    JobFenceDone other_front_end;  // set: answered here instead of `answer`
  };
  PmixFenceBook fences_;
  std::map<std::uint64_t, FenceWaiter> fence_waiters_;
  void on_fence_done(const FenceDone& done);  // of a fence in a PMIx scope
  // A fence of this daemon's (a PMIx call's or fence_job's) into the book.
  void begin_fence(PmixFenceBook::Call fence, FenceWaiter waiter);
  TagClaim fence_claim_;

  event_base* base_ = nullptr;
  // Answers that wait for a reply, by the handle the reply echoes: requests
  // forwarded to the controller, and direct-modex requests sent to the
  // daemon hosting the rank.
  struct Awaiting {
    ForwardedMap<PmixAnswer<>> publish;  // publish and unpublish
    ForwardedMap<PmixAnswer<std::vector<FoundValueWire>>> lookup;
    ForwardedMap<PmixAnswer<std::string>> spawn;
    ForwardedMap<SpawnDone> other_spawns;  // spawn_job's
    std::map<std::uint64_t, PmixAnswer<Bytes>> modex;
    std::uint64_t next_handle = 1;  // of every kind
  };
  Awaiting awaiting_;
};

}  // namespace grove
