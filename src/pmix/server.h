// The PMIx server of one grove daemon: libpmix's server library behind a
// small C++ surface the daemon drives from its libevent loop.
//
// Threading. libpmix runs its own progress thread and makes its upcalls
// (fence_nb, direct_modex, abort, client_finalized, ...) there. Those upcalls
// only copy their arguments and post them to a mailbox on the daemon's
// event_base (a locked queue plus an eventfd); the handler of its requests
// (pmix/requests.h) therefore always runs on the loop thread, inside event_base_loop. Every
// PmixServer method must be called on the loop thread too. Answers going back into PMIx
// (pmix/answer.h) are made from the loop thread; PMIx moves them onto its own thread.
//
// One per process, once. libpmix's server is a process-wide singleton, so
// create() fails while another PmixServer exists, and also after one has been
// destroyed: libpmix 4.2 aborts the process if its server is initialized again
// after PMIx_server_finalize. Two daemons on one host are two processes, each
// with its own tmpdir (PMIx writes its rendezvous files there).
//
// Never blocking. register_job, register_client and deregister_job are
// answered later on the loop thread (PMIx's progress thread does the work;
// a deadline bounds it), so a progress thread held by a stranger's
// connection or a libpmix bug never stops the daemon's loop.
//
// Lifetime. Destroying the server finalizes PMIx: connected clients lose
// their server, fences and direct-modex requests still pending are dropped
// (answering them does nothing) and queued upcalls are discarded. Do not
// destroy the server from inside its request handler or a `done` callback.
//
// Status values. Every `int status` here is a pmix_status_t: 0 (kPmixSuccess)
// or a negative PMIx error code such as the constants below, which the
// daemon passes back to PMIx to fail a fence or a direct-modex request.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pmix/event_messages.h"
#include "pmix/requests.h"
#include "util/result.h"

struct event_base;

struct hwloc_topology;

namespace grove {

inline constexpr int kPmixSuccess = 0;
inline constexpr int kPmixError = -1;
inline constexpr int kPmixErrorTimeout = -24;
inline constexpr int kPmixErrorUnreachable = -25;
inline constexpr int kPmixErrorNotFound = -46;
inline constexpr int kPmixErrorNotSupported = -47;
inline constexpr int kPmixErrorPartialSuccess = -52;
inline constexpr int kPmixErrorBadParam = -27;
inline constexpr int kPmixErrorOutOfResource = -29;
inline constexpr int kPmixProcTerminated = -111;
inline constexpr int kPmixEventJobEnd = -145;
inline constexpr int kPmixErrorJobNonZeroTerm = -187;
inline constexpr int kPmixErrorJobFailedToLaunch = -181;
inline constexpr int kPmixEventNodeDown = -231;
inline constexpr int kPmixEventProcTerminated = -201;
inline constexpr int kPmixErrorProcRequestedAbort = -8;
inline constexpr int kPmixErrorProcTermWithoutSync = -200;
inline constexpr int kPmixErrorProcAbortedBySignal = -402;
inline constexpr int kPmixGroupInviteDeclined = -162;
// The source of the events the DVM raises itself (a job's end, a lost daemon).
inline constexpr const char* kPmixDvmSource = "grove.dvm";

// "SUCCESS", "TIMEOUT", ...: PMIx's name for a status value.
std::string pmix_status_text(int status);
// The PMIx status for the publish store's answer.
int pmix_publish_status(PublishStatus status);

// Where one rank of a job runs.
struct PmixProcPlacement {
  std::uint32_t rank = 0;
  std::uint32_t daemon_vpid = 0;  // the daemon (PMIx server) hosting the rank
  std::uint16_t local_rank = 0;   // index among the job's ranks on its node
  std::uint16_t node_rank = 0;    // index among all jobs' ranks on its node
  std::uint32_t node_id = 0;      // index into PmixJob::node_hostnames
  // Its CPUs ("0-1") when bound and on this node: PMIX_CPUSET and its
  // PMIX_LOCALITY_STRING; empty: not bound, or elsewhere.
  std::string cpuset;
};

// A job as one daemon registers it. Every daemon hosting a rank registers the
// whole job (every rank, every node); a daemon hosting none need not.
// One app of a job: its ranks follow the previous app's.
struct PmixApp {
  std::uint32_t size = 0;  // PMIX_APP_SIZE
  std::string wdir;        // PMIX_WDIR (the app's working directory)
  std::string argv;        // PMIX_APP_ARGV, space-joined
};

struct PmixJob {
  std::string nspace;      // e.g. "grove.1234.1", at most 255 characters
  std::uint32_t size = 0;  // total ranks; procs.size() must equal it
  std::uint32_t universe_size = 0;
  std::vector<PmixProcPlacement> procs;     // every rank, in rank order
  std::vector<std::string> node_hostnames;  // node id -> node name, all distinct
  std::uint32_t this_node_id = 0;           // the node of this daemon
  // Node ids holding more ranks than slots (PMIX_NODE_OVERSUBSCRIBED).
  std::vector<std::uint32_t> oversubscribed_nodes;
  std::string tmpdir;                   // PMIX_TMPDIR: the daemon's session directory
  std::string nsdir;                    // PMIX_NSDIR: the job's directory under it; each local
                                        // rank's PMIX_PROCDIR is nsdir/RANK (made by the host)
  std::string map_by;                   // PMIX_MAPBY and PMIX_RANKBY
  std::string bind_to = "none";         // PMIX_BINDTO
  std::vector<PmixApp> apps;            // their sizes add up to size; empty: one app
  std::uint64_t avail_phys_memory = 0;  // PMIX_AVAIL_PHYS_MEMORY (bytes; 0: not known)
  std::string parent_nspace;            // the rank that spawned the job (PMIX_PARENT_ID);
  std::uint32_t parent_rank = 0;        // empty nspace: not spawned
};

struct PmixServerOptions {
  std::string tmpdir;             // this daemon's own directory; created (0700) if missing
  std::uint32_t daemon_vpid = 0;  // the server's rank ...
  std::string daemon_nspace = "grove.daemons";  // ... in this nspace
  // Admit a connection as rank R only from the process started as R
  // (expect_client_process) or its descendants (pmix_verify_clients).
  bool verify_clients = true;
  // How long a connection of this user may keep libpmix waiting for its
  // handshake before it is cut (pmix_handshake_timeout_ms; 0: never).
  // Another user's is cut at once when clients are verified.
  std::int64_t handshake_timeout_ms = 1000;
  // How long a registration or deregistration may wait for libpmix's answer
  // before it fails and new ranks are refused (pmix_call_timeout_ms).
  std::int64_t call_timeout_ms = 30000;
  // This host's hwloc topology, loaded by the daemon; libpmix uses and
  // shares it instead of loading its own. Must outlive the server. Null:
  // libpmix loads one.
  hwloc_topology* topology = nullptr;
};

// The hand-overs between libpmix's progress thread and the daemon's loop.
struct PmixHops {
  std::uint64_t upcalls = 0;       // messages libpmix's thread posted to the loop
  std::uint64_t upcall_wakes = 0;  // of them, those that had to wake the loop (an eventfd write)
  std::uint64_t answers = 0;       // answers the loop handed back to libpmix's thread
};

class PmixServer {
 public:
  // PMIx_server_init with PMIX_SERVER_TMPDIR and PMIX_SYSTEM_TMPDIR set to
  // options.tmpdir, and PMIX_SERVER_NSPACE / PMIX_SERVER_RANK set to the
  // daemon's identity.
  // Every request and notice goes to `handler`, on the loop thread.
  static Result<std::unique_ptr<PmixServer>> create(event_base* loop, PmixServerOptions options,
                                                    PmixRequestHandler handler);
  ~PmixServer();  // PMIx_server_finalize
  PmixServer(const PmixServer&) = delete;
  PmixServer& operator=(const PmixServer&) = delete;

  // Status answers run later on the loop thread, never inside the call.
  using StatusDone = std::function<void(Status)>;
  // PMIx_server_register_nspace (node map, proc map, sizes, local peers,
  // per-node and per-proc data) then PMIx_server_setup_local_support. The
  // job's ranks whose daemon_vpid is this daemon's are its local clients.
  void register_job(const PmixJob& job, StatusDone done);
  // PMIx_server_register_client, before that rank is forked.
  void register_client(const std::string& nspace, std::uint32_t rank, uid_t uid, gid_t gid,
                       StatusDone done);
  // PMIx_server_setup_fork for a registered client: the "NAME=value" entries
  // to add to its environment (PMIX_NAMESPACE, PMIX_RANK, PMIX_SERVER_URI*,
  // ...). libpmix 4.2 does this on the calling thread without waiting.
  Result<std::vector<std::string>> client_environment(const std::string& nspace,
                                                      std::uint32_t rank);
  // The process forked as (nspace, rank): only it, or a descendant of it,
  // may connect as that rank. Call before the process can exec.
  void expect_client_process(const std::string& nspace, std::uint32_t rank, pid_t pid);
  // That process has been reaped (its pid may be reused): nothing more
  // connects as that rank.
  void client_process_reaped(const std::string& nspace, std::uint32_t rank);
  // PMIx_server_deregister_nspace: forgets the job and its clients.
  void deregister_job(const std::string& nspace, StatusDone done);
  // Registrations and deregistrations PMIx has not answered yet.
  std::size_t pending_registrations() const;
  // A call to libpmix still unanswered past its deadline (what it was), or
  // nothing: with one, libpmix's progress thread is likely stuck for good
  // (docs/pmix.md) and new ranks would hang in PMIx_Init.
  std::optional<std::string> unanswered_call() const;
  // Those of `roots` whose process tree holds a connection that waits for
  // the server's answer (only known when clients are verified: nullopt if
  // not).
  std::optional<std::set<pid_t>> handshakes_pending(const std::vector<pid_t>& roots);

  // On the daemon hosting (nspace, rank): that rank's modex blob from the
  // local PMIx server (PMIx_server_dmodex_request; PMIx waits until the rank
  // has committed). `done` runs later on the loop thread, never inside this
  // call, unless the server is destroyed first.
  void fetch_local_modex(const std::string& nspace, std::uint32_t rank,
                         std::function<void(int status, std::vector<std::byte> blob)> done);

  // PMIx_Notify_event to this server's clients that registered for it.
  Status notify(const PmixEvent& event);

  // Runs, now, every upcall PMIx has posted and the loop has not yet
  // handled: what a client did before it exited is known when its exit is.
  void handle_pending_upcalls();

  std::uint32_t daemon_vpid() const;
  // Fences and direct-modex requests handed to the daemon, not yet answered.
  std::size_t pending_fence_count() const;
  std::size_t pending_direct_modex_count() const;
  PmixHops hops() const;

 private:
  class Impl;
  explicit PmixServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace grove
