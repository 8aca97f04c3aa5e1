// Internal to grove_pmix. The upcalls libpmix makes on its own progress
// thread, copied into plain values. The C entry points in upcalls.cc do
// nothing but build one of these and post it to the daemon loop's mailbox;
// PmixServer (server.cc) handles it there. The cbfunc/cbdata pair is PMIx's
// and must be called exactly once, from the loop thread, to release PMIx's
// request.
#pragma once

#include <pmix_server.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "pmix/publish_messages.h"
#include "pmix/server.h"
#include "pmix/spawn_messages.h"
#include "rml/transport/mailbox.h"

namespace grove {
class ClientGate;
}

namespace grove::pmix_internal {

// fence_nb: every local participant has contributed.
struct FenceUpcall {
  std::string nspace;
  std::vector<std::uint32_t> ranks;  // sorted; empty means every rank of nspace
  // Participants of other nspaces (jobs that connected), the same way.
  std::map<std::string, std::vector<std::uint32_t>> others;
  bool collect_data = false;
  int timeout_seconds = 0;      // PMIX_TIMEOUT (0: none)
  std::vector<std::byte> data;  // this server's contribution
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// direct_modex: a local client asked for data of a rank this server lacks.
struct DirectModexUpcall {
  std::string nspace;
  std::uint32_t rank = 0;
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// The bytes of an abort's message the DVM keeps (upcalls.cc).
inline constexpr std::size_t kMaxAbortMessage = 4096;

// abort: a local client called PMIx_Abort and waits for cbfunc.
struct AbortUpcall {
  std::string nspace;
  std::uint32_t rank = 0;
  int status = 0;
  std::string message;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// client_finalized: a local client called PMIx_Finalize and waits for cbfunc.
struct FinalizedUpcall {
  std::string nspace;
  std::uint32_t rank = 0;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// client_connected: a local client finished PMIx_Init's handshake. Posted
// before the client's PMIx_Init returns, so before it can exit.
// `refused` says why the client gate turned the connection away (empty when
// it was admitted).
struct ConnectedUpcall {
  std::string nspace;
  std::uint32_t rank = 0;
  std::string refused;
};

// publish, lookup, unpublish: the request as the daemon forwards it to the
// controller (its handle is the daemon's to set); values already packed.
struct PublishUpcall {
  PublishMessage message;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};
struct LookupUpcall {
  LookupMessage message;
  pmix_lookup_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};
struct UnpublishUpcall {
  UnpublishMessage message;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// spawn: a local client asks for a new job (its handle is the daemon's to
// set).
struct SpawnUpcall {
  SpawnMessage message;
  pmix_spawn_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// connect_nb, disconnect_nb: every local participant has called (its
// answer is made on the loop thread).
struct ConnectUpcall {
  PmixConnectCall call;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// group: every local member has called PMIx_Group_construct or _destruct
// (its answer is made on the loop thread).
struct GroupUpcall {
  PmixGroupCall call;
  pmix_info_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// query: a local client's PMIx_Query_info (its answer is made on the loop
// thread).
struct QueryUpcall {
  PmixQueryCall call;
  pmix_info_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// log: a local client's PMIx_Log, answered on the loop thread.
struct LogUpcall {
  PmixLogCall call;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// notify_event: a local client's event for clients beyond this server.
struct NotifyUpcall {
  PmixEvent event;
};

// A request grove does not serve: answered PMIX_ERR_NOT_SUPPORTED at
// once; this tells the daemon, which notes it in its log.
struct UnsupportedUpcall {
  std::string call;
  std::string nspace;
  std::uint32_t rank = 0;
};

// PMIx's answer to a registration or deregistration (async_ops.h).
struct OpFinished {
  std::uint64_t id = 0;
  pmix_status_t status = PMIX_SUCCESS;
};

// The handshake watchdog shut a connection down (on its own thread).
struct HandshakeCutUpcall {
  HandshakeCut cut;
};

// The answer to PMIx_server_dmodex_request (fetch_local_modex), copied.
struct LocalModexReply {
  std::uint64_t request = 0;
  int status = 0;
  std::vector<std::byte> blob;
};

using Upcall =
    std::variant<FenceUpcall, DirectModexUpcall, AbortUpcall, FinalizedUpcall, ConnectedUpcall,
                 PublishUpcall, LookupUpcall, UnpublishUpcall, SpawnUpcall, ConnectUpcall,
                 GroupUpcall, QueryUpcall, LogUpcall, NotifyUpcall, UnsupportedUpcall,
                 HandshakeCutUpcall, OpFinished, LocalModexReply>;
using UpcallMailbox = Mailbox<Upcall>;

// The module handed to PMIx_server_init: fence_nb, direct_modex, abort,
// client_finalized, client_connected, publish, lookup, unpublish, spawn,
// connect, disconnect, group, query, log and notify_event are implemented;
// allocate, job control, monitor, credentials and fabric answer
// PMIX_ERR_NOT_SUPPORTED (and tell the daemon);
// the rest stay null, which PMIx treats as "the host does not do this".
pmix_server_module_t make_server_module();

// Where upcalls go. PMIx's server is a process-wide singleton whose upcalls
// carry no host context, so this is one process-wide pointer: set before
// PMIx_server_init, cleared after PMIx_server_finalize (which joins PMIx's
// progress thread), so no upcall can see a dangling mailbox. Returns false
// if a mailbox is already installed (a second PmixServer in the process).
// `gate`, when not null, vets every client connection (client_gate.h); it
// lives as long as the mailbox.
bool install_mailbox(UpcallMailbox* mailbox, ClientGate* gate);
void clear_mailbox();

// The pmix_dmodex_response_fn_t for PMIx_server_dmodex_request; cbdata is the
// request id (not a pointer), so a reply that never comes leaks nothing.
void on_local_modex_reply(pmix_status_t status, char* data, std::size_t size, void* cbdata);

}  // namespace grove::pmix_internal
