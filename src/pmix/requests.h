// What a PmixServer asks of its daemon: one stream, in the order libpmix
// made the upcalls, of requests (each holding the PmixAnswer its client waits
// for) and notices (nothing to answer). The daemon handles each with one
// std::visit; a request it does not serve it simply drops, and the dropped
// answer tells the client PMIX_ERR_NOT_SUPPORTED (pmix/answer.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pmix/answer.h"
#include "pmix/event_messages.h"
#include "pmix/handshake_watch.h"
#include "pmix/publish_messages.h"
#include "pmix/spawn_messages.h"

namespace grove {

// A fence_nb upcall, copied: every local participant has entered the fence
// and `data` is this server's contribution. Not every fence arrives here:
// libpmix 4.2 completes a fence whose participants are all local to this
// server by itself, without an upcall.
struct PmixFenceCall {
  // The aggregate: every participating server's blob, concatenated in any
  // order, with kPmixSuccess; or an error.
  PmixAnswer<std::vector<std::byte>> answer;
  std::string nspace;
  std::vector<std::uint32_t> ranks;  // sorted; empty means every rank of nspace
  // Participants of other nspaces, the same way: a fence across jobs that
  // connected (Open MPI 4.1's MPI_Comm_disconnect is one).
  std::map<std::string, std::vector<std::uint32_t>> others;
  bool collect_data = false;    // the clients asked for PMIX_COLLECT_DATA
  int timeout_seconds = 0;      // PMIX_TIMEOUT the clients gave (0: none)
  std::vector<std::byte> data;  // this server's blob (may be empty)
};

// A connect_nb or disconnect_nb upcall: every local participant has called
// PMIx_Connect (or PMIx_Disconnect) over this set of processes.
struct PmixConnectCall {
  PmixAnswer<> answer;
  bool disconnect = false;
  // The participants by nspace: ranks sorted, empty meaning every rank.
  std::map<std::string, std::vector<std::uint32_t>> procs;
  std::uint32_t timeout_seconds = 0;  // PMIX_TIMEOUT the clients gave (0: none)
};

// A group upcall: every local member has called PMIx_Group_construct (or
// PMIx_Group_destruct) for group `id` over this set of processes.
struct PmixGroupCall {
  // With the context id handed to the members as PMIX_GROUP_CONTEXT_ID.
  PmixAnswer<std::optional<std::uint64_t>> answer;
  bool destruct = false;
  std::string id;  // the members' name for the group
  // The members by nspace: ranks sorted, empty meaning every rank.
  std::map<std::string, std::vector<std::uint32_t>> procs;
  bool assign_context_id = false;     // PMIX_GROUP_ASSIGN_CONTEXT_ID was asked
  std::uint32_t timeout_seconds = 0;  // PMIX_TIMEOUT the clients gave (0: none)
};

// One answer to a query: the key asked and its value.
struct PmixQueryAnswer {
  std::string key;
  std::variant<std::string, std::uint32_t, std::size_t> value;  // size_t: PMIX_SIZE
};

// A PMIx_Query_info from a local client (PMIx_Query_info).
struct PmixQueryCall {
  PmixAnswer<std::vector<PmixQueryAnswer>> answer;
  std::string nspace;  // the asker
  std::uint32_t rank = 0;
  struct Query {
    std::vector<std::string> keys;
    std::string nspace;  // its PMIX_NSPACE qualifier; empty: none
  };
  std::vector<Query> queries;
};

// The query keys grove answers (libpmix's names; checked in server.cc).
inline constexpr std::string_view kPmixQueryNamespaces = "pmix.qry.ns";
inline constexpr std::string_view kPmixJobSize = "pmix.job.size";
inline constexpr std::string_view kPmixNumNodes = "pmix.num.nodes";
inline constexpr std::string_view kPmixQueryNumPsets = "pmix.qry.psetnum";
inline constexpr std::string_view kPmixQueryPsetNames = "pmix.qry.psets";

// A direct_modex upcall: a local client wants data of a rank this server
// lacks. Answered with that rank's blob (fetch_local_modex on the daemon
// hosting it), or an error.
struct PmixDirectModexCall {
  std::string nspace;
  std::uint32_t rank = 0;
  PmixAnswer<std::vector<std::byte>> answer;
};

// A PMIx_Log from a local client: lines for the job's output, and the
// channels asked for that grove does not serve (syslog, email, ...).
struct PmixLogCall {
  // kPmixSuccess when every line and channel was served, else
  // PMIX_ERR_PARTIAL_SUCCESS or kPmixErrorNotSupported.
  PmixAnswer<> answer;
  std::string nspace;
  std::uint32_t rank = 0;
  std::vector<std::string> stdout_lines;
  std::vector<std::string> stderr_lines;
  std::vector<std::string> unserved;  // their keys
};

// PMIx_Publish, PMIx_Lookup and PMIx_Unpublish from a local client (the
// message's handle is the daemon's to set): a publish or unpublish is
// answered with the store's verdict (pmix_publish_status), a lookup with
// the values found.
struct PmixPublishCall {
  PublishMessage message;
  PmixAnswer<> answer;
};
struct PmixLookupCall {
  LookupMessage message;
  PmixAnswer<std::vector<FoundValueWire>> answer;
};
struct PmixUnpublishCall {
  UnpublishMessage message;
  PmixAnswer<> answer;
};

// PMIx_Spawn from a local client, answered with the new job's nspace once it
// is launched, or an error once it is known not to start.
struct PmixSpawnCall {
  SpawnMessage message;
  PmixAnswer<std::string> answer;
};

// A local client called PMIx_Abort; it is released after the handler
// returns, and the daemon is expected to end the job.
struct PmixAbortNotice {
  std::string nspace;
  std::uint32_t rank = 0;
  int status = 0;
  std::string message;
};

// A local client called PMIx_Finalize (it is released after the handler).
struct PmixFinalizedNotice {
  std::string nspace;
  std::uint32_t rank = 0;
};

// A local client connected (its PMIx_Init is about to return).
struct PmixConnectedNotice {
  std::string nspace;
  std::uint32_t rank = 0;
};

// A connection claiming to be (nspace, rank) was refused: why.
struct PmixRefusedNotice {
  std::string nspace;
  std::uint32_t rank = 0;
  std::string why;
};

// A request grove never serves (PMIx_Allocation_request, PMIx_Job_control,
// ...) was answered PMIX_ERR_NOT_SUPPORTED: which, and from whom.
struct PmixUnsupportedNotice {
  std::string call;
  std::string nspace;
  std::uint32_t rank = 0;
};

// libpmix answered, late, the last call it had left unanswered past its
// deadline (PmixServer::unanswered_call() is empty again): which call.
struct PmixAnsweredAgainNotice {
  std::string call;
};

// Besides these, a PmixEvent: a local client notified an event beyond this
// server (a range wider than its node), which libpmix has delivered here
// already; and a HandshakeCut: a connection that held libpmix in its
// handshake was shut down (handshake_watchdog.h).
using PmixRequest =
    std::variant<PmixFenceCall, PmixDirectModexCall, PmixConnectCall, PmixGroupCall, PmixQueryCall,
                 PmixLogCall, PmixPublishCall, PmixLookupCall, PmixUnpublishCall, PmixSpawnCall,
                 PmixEvent, PmixAbortNotice, PmixFinalizedNotice, PmixConnectedNotice,
                 PmixRefusedNotice, PmixUnsupportedNotice, PmixAnsweredAgainNotice, HandshakeCut>;
using PmixRequestHandler = std::function<void(PmixRequest)>;

// The client call behind a request or notice ("PMIx_Fence", "PMIx_Spawn",
// "PMIx_Group_destruct", ...), for logs; a notice of an unsupported call
// names that call.
std::string pmix_call_name(const PmixRequest& request);

}  // namespace grove
